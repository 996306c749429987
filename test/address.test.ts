// NodeAddress: parsing, printing and validation of `system@host:port`, including hosts that are neither a
// hostname nor an IP literal, and the property that every printed address parses back to itself; the parse
// cache: bounded whatever is parsed, and indistinguishable from parsing afresh except by identity.
import fc from 'fast-check';
import { isIP } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ADDRESS_CACHE_LIMIT, NodeAddress, addressCacheSize, parseAddressUncached } from '../src/cluster/address.js';
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

  it("answers actor-ts's vocabulary: systemName, equals and compareTo", () => {
    const a = NodeAddress.parse('app@10.0.0.1:7701');
    expect(a.systemName).toBe('app');
    expect(a.systemName).toBe(a.system);
    expect(a.equals(parseAddressUncached('app@10.0.0.1:7701'))).toBe(true);
    expect(a.compareTo(parseAddressUncached('app@10.0.0.1:7701'))).toBe(0);
    expect(a.compareTo(NodeAddress.parse('app@10.0.0.2:7701'))).toBeLessThan(0);
    expect(NodeAddress.parse('app@10.0.0.2:7701').compareTo(a)).toBeGreaterThan(0);
    // Code-unit order, not the locale's: "B" (0x42) sorts before "a" (0x61) on every node.
    expect(NodeAddress.parse('B@h:1').compareTo(NodeAddress.parse('a@h:1'))).toBeLessThan(0);
  });

  it('orders addresses as their strings in code-unit order, consistently with equals', () => {
    const arbitrary = fc.tuple(
      fc.constantFrom('app', 'App', 'b', 'sys_1'),
      fc.constantFrom('h', 'H', '10.0.0.1', '[::1]'),
      fc.integer({ min: 1, max: 65535 }),
    );
    fc.assert(
      fc.property(arbitrary, arbitrary, ([s1, h1, p1], [s2, h2, p2]) => {
        const x = new NodeAddress(s1, h1, p1);
        const y = new NodeAddress(s2, h2, p2);
        const order = x.compareTo(y);
        // `+ 0` turns -0 into 0: equal addresses compare 0 both ways, and toBe tells 0 from -0.
        expect(Math.sign(order)).toBe(-Math.sign(y.compareTo(x)) + 0);
        expect(order === 0).toBe(x.equals(y));
        expect(Math.sign(order)).toBe(x.toString() < y.toString() ? -1 : x.toString() > y.toString() ? 1 : 0);
      }),
      { numRuns: 300 },
    );
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
    const text = fc.oneof(
      fc.string(),
      fc.tuple(system, fc.string(), port).map(([s, h, p]) => `${s}@${h}:${p}`),
    );
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

  describe('parse cache', () => {
    /** What parsing did: the address's fields, or the error's code and message. */
    function outcome(parse: () => NodeAddress): unknown {
      try {
        const address = parse();
        return { ok: [address.system, address.host, address.port, address.toString()] };
      } catch (error) {
        return { error: error instanceof ActorTsError ? [error.code, error.message] : String(error) };
      }
    }

    it('returns the same frozen instance for the same input without changing what it parses to', () => {
      const first = NodeAddress.parse('cache@10.9.8.7:4242');
      const again = NodeAddress.parse('cache@10.9.8.7:4242');
      expect(again).toBe(first);
      expect(Object.isFrozen(first)).toBe(true);
      expect(() => {
        (first as { port: number }).port = 1;
      }).toThrow(TypeError);
      expect(NodeAddress.parse('cache@10.9.8.7:4242').port).toBe(4242);
    });

    it('never caches an invalid input: it throws invalid_address every time, with the same message', () => {
      const input = 'cache@10.9.8.700:4242';
      const errors = [0, 1, 2].map(() => outcome(() => NodeAddress.parse(input)));
      expect(errors[0]).toEqual({ error: ['invalid_address', expect.stringContaining('system@host:port')] });
      expect(errors[1]).toEqual(errors[0]);
      expect(errors[2]).toEqual(errors[0]);
      expect(NodeAddress.tryParse(input)).toBeUndefined();
    });

    it(`stays at most ${ADDRESS_CACHE_LIMIT} entries under many distinct addresses, and evicted ones parse again`, () => {
      const first = NodeAddress.parse('flood@10.0.0.1:1');
      for (let i = 0; i < ADDRESS_CACHE_LIMIT * 3; i++) {
        const input = `flood@10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}:${(i % 65535) + 1}`;
        expect(NodeAddress.parse(input).toString()).toBe(input);
        expect(addressCacheSize()).toBeLessThanOrEqual(ADDRESS_CACHE_LIMIT);
      }
      expect(addressCacheSize()).toBe(ADDRESS_CACHE_LIMIT);
      // The oldest entries went first: this one was parsed anew, into an equal but different instance.
      const later = NodeAddress.parse('flood@10.0.0.1:1');
      expect(later.equals(first)).toBe(true);
    });

    it('does not keep a long input (an IPv6 zone isIP accepts at any length), yet parses it', () => {
      const input = `app@[fe80::1%${'z'.repeat(2_000)}]:7701`;
      const before = addressCacheSize();
      const address = NodeAddress.parse(input);
      expect(address.toString()).toBe(input);
      expect(NodeAddress.parse(input)).not.toBe(address);
      expect(addressCacheSize()).toBe(before);
    });

    it('property: cached parsing agrees with uncached parsing on valid and invalid strings, parsed repeatedly', () => {
      const system = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/);
      const valid = fc
        .tuple(
          system,
          fc.oneof(
            fc.domain(),
            fc.ipV4(),
            fc.ipV6().map((ip) => `[${ip}]`),
          ),
          fc.integer({ min: 0, max: 70_000 }),
          fc.boolean(),
        )
        .map(([s, h, p, uri]) => `${uri ? 'actor-ts://' : ''}${s}@${h}:${p}`);
      const text = fc.oneof(
        valid,
        fc.string(),
        fc.string({ unit: fc.constantFrom('a', '@', ':', '.', '1', '[', ']', '-') }),
      );
      fc.assert(
        fc.property(
          fc.array(text, { minLength: 1, maxLength: 20 }),
          fc.array(fc.nat(), { maxLength: 40 }),
          (inputs, picks) => {
            // Parse some inputs several times, in an arbitrary order, so both hits and misses are compared.
            const order = [...inputs, ...picks.map((i) => inputs[i % inputs.length] ?? '')];
            for (const input of order) {
              const reference = outcome(() => parseAddressUncached(input));
              expect(outcome(() => NodeAddress.parse(input))).toEqual(reference);
              const expected = 'ok' in (reference as object) ? parseAddressUncached(input).toString() : undefined;
              expect(NodeAddress.tryParse(input)?.toString()).toBe(expected);
              expect(addressCacheSize()).toBeLessThanOrEqual(ADDRESS_CACHE_LIMIT);
            }
          },
        ),
      );
    });
  });
});
