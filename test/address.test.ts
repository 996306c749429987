// NodeAddress: parsing, printing and validation of `system@host:port`, including hosts that are neither a
// hostname nor an IP literal, and the property that every printed address parses back to itself.
import fc from 'fast-check';
import { isIP } from 'node:net';
import { describe, expect, it } from 'vitest';
import { NodeAddress } from '../src/cluster/address.js';
import { ActorTsError } from '../src/errors.js';

describe('NodeAddress', () => {
  it('parses system@host:port and prints it back', () => {
    const address = NodeAddress.parse('app@127.0.0.1:7701');
    expect(address.system).toBe('app');
    expect(address.host).toBe('127.0.0.1');
    expect(address.port).toBe(7701);
    expect(address.toString()).toBe('app@127.0.0.1:7701');
    expect(address.toUri()).toBe('actor-ts://app@127.0.0.1:7701');
  });

  it('accepts the actor-ts:// prefix, hostnames and bracketed IPv6', () => {
    expect(NodeAddress.parse('actor-ts://app@10.0.0.5:7777').toString()).toBe('app@10.0.0.5:7777');
    expect(NodeAddress.parse('sys_1@node-3.example.com:1').host).toBe('node-3.example.com');
    expect(NodeAddress.parse('app@[::1]:7701').host).toBe('[::1]');
  });

  it('compares by value', () => {
    expect(NodeAddress.parse('app@h:1').equals(NodeAddress.parse('actor-ts://app@h:1'))).toBe(true);
    expect(NodeAddress.parse('app@h:1').equals(NodeAddress.parse('app@h:2'))).toBe(false);
  });

  it.each([
    '',
    'app',
    'app@host',
    'app@host:',
    '@host:1',
    'app@:1',
    'app@host:0',
    'app@host:65536',
    'app@host:12ab',
    'app@ho st:1',
    'http://app@host:1',
    'a pp@host:1',
    // Hosts that are neither an RFC 1123 hostname, an IPv4 literal nor a bracketed IPv6 literal.
    'app@[::::]:9701',
    'app@[:]:1',
    'app@[1:2:3:4:5:6:7:8:9]:1',
    'app@[12345::1]:1',
    'app@[127.0.0.1]:1',
    'app@::1:7701',
    'app@[::1:7701',
    'app@1.2.3.999:1',
    'app@1.2.3:1',
    'app@999:1',
    'app@-host:1',
    'app@host-:1',
    'app@ho_st:1',
    'app@host..example:1',
    `app@${'a'.repeat(64)}.example:1`,
  ])('rejects %j with a typed error naming the expected form', (input) => {
    let error: unknown;
    try {
      NodeAddress.parse(input);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ActorTsError);
    expect((error as ActorTsError).code).toBe('invalid_address');
    expect((error as ActorTsError).message).toContain('system@host:port');
    expect(NodeAddress.tryParse(input)).toBeUndefined();
  });

  it('accepts the literal forms isIP accepts', () => {
    for (const host of ['[::]', '[2001:db8::1]', '[::ffff:10.0.0.1]', '[FE80::1]', '0.0.0.0', '255.255.255.255']) {
      expect(NodeAddress.parse(`app@${host}:7701`).host).toBe(host);
    }
  });

  const system = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/);
  const port = fc.integer({ min: 1, max: 65535 });
  const host = fc.oneof(
    fc.domain().filter((domain) => !/^[0-9.]+$/.test(domain)),
    fc.ipV4(),
    fc.ipV6().map((ip) => `[${ip}]`),
  );

  it('property: every address it accepts prints to a string that parses back to the same address', () => {
    fc.assert(
      fc.property(system, host, port, fc.boolean(), (sys, h, p, uri) => {
        const address = new NodeAddress(sys, h, p);
        const printed = uri ? address.toUri() : address.toString();
        const again = NodeAddress.parse(printed);
        expect(again.equals(address)).toBe(true);
        expect(again.toString()).toBe(address.toString());
      }),
    );
  });

  it('property: any input either fails with invalid_address or yields a host that is a name or an IP literal', () => {
    const text = fc.oneof(fc.string(), fc.tuple(system, fc.string(), port).map(([s, h, p]) => `${s}@${h}:${p}`));
    fc.assert(
      fc.property(text, (input) => {
        let address: NodeAddress;
        try {
          address = NodeAddress.parse(input);
        } catch (error) {
          expect(error).toBeInstanceOf(ActorTsError);
          expect((error as ActorTsError).code).toBe('invalid_address');
          return;
        }
        const bracketed = address.host.startsWith('[');
        if (bracketed) expect(isIP(address.host.slice(1, -1))).toBe(6);
        else expect(isIP(address.host) === 4 || /^[A-Za-z0-9.-]+$/.test(address.host)).toBe(true);
        expect(NodeAddress.parse(address.toString()).equals(address)).toBe(true);
      }),
    );
  });
});
