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
});
