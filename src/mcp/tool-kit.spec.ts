import { AuthContext } from '../access/auth-context';
import { Capability } from '../access/capability';
import { allowedHostnames } from './mcp-http';
import { capabilityChallenge, checkedArgs } from './tool-kit';
import { z } from 'zod';

const caller = (name: string, grants: Array<{ namespacePattern: string; capabilities: Capability[] }>) =>
  AuthContext.of({ tokenId: 't', principalId: 'p', name, grants });

const callOf = (args: Record<string, unknown>) => ({
  request: { jsonrpc: '2.0' as const, id: 1, method: 'tools/call', params: { name: 'x', arguments: args } },
});

describe('capabilityChallenge', () => {
  const search = { name: 'search_memory', capability: Capability.SEARCH, namespaced: true };
  const read = { name: 'get_fact', capability: Capability.READ, namespaced: false };

  it('lets a call through when the grant covers the namespace (admin implies search)', async () => {
    const auth = caller('a', [{ namespacePattern: 'team/*', capabilities: [Capability.ADMIN] }]);
    expect(await capabilityChallenge(search, () => auth)(callOf({ namespace: 'team/x' }))).toBeUndefined();
  });

  it('challenges for the one capability, naming the namespace in a description RFC 6750 allows', async () => {
    const auth = caller('Zoë "the agent"', [{ namespacePattern: 'team/*', capabilities: [Capability.SEARCH] }]);
    const c = await capabilityChallenge(search, () => auth)(callOf({ namespace: 'other/x' }));
    expect(c?.scopes).toEqual(['search']);
    expect(c?.errorDescription).toBe("token Zo? 'the agent' lacks the search capability on namespace other/x (search_memory); ask an admin for a grant");
    expect(c?.errorDescription).toMatch(/^[\u0020-\u0021\u0023-\u005b\u005d-\u007e]+$/);
  });

  it('for tools that take an id, challenges only a token holding the capability nowhere', async () => {
    const somewhere = caller('r', [{ namespacePattern: 'a', capabilities: [Capability.READ] }]);
    const nowhere = caller('s', [{ namespacePattern: '*', capabilities: [Capability.SEARCH, Capability.LIST] }]);
    expect(await capabilityChallenge(read, () => somewhere)(callOf({ id: 'f' }))).toBeUndefined();
    expect((await capabilityChallenge(read, () => nowhere)(callOf({ id: 'f' })))?.scopes).toEqual(['read']);
  });

  it('leaves a non-string namespace to the argument check (BAD_USER_INPUT), not a 403', async () => {
    const auth = caller('a', [{ namespacePattern: 'n', capabilities: [Capability.SEARCH] }]);
    expect(await capabilityChallenge(search, () => auth)(callOf({ namespace: 42 }))).toBeUndefined();
  });
});

describe('checkedArgs', () => {
  const schema = z.object({ namespace: z.string(), limit: z.number().int().optional().meta({ description: 'n', minimum: 1, maximum: 100 }) });

  it('advertises the bounds without enforcing them, so the service words the refusal', async () => {
    const std = checkedArgs('t', schema)['~standard'];
    expect(std.jsonSchema.input({ target: 'draft-2020-12' })).toMatchObject({ properties: { limit: { minimum: 1, maximum: 100 } }, required: ['namespace'] });
    expect(await std.validate({ namespace: 'n', limit: 1000 })).toEqual({ value: { ok: true, args: { namespace: 'n', limit: 1000 } } });
  });

  it('hands a wrongly typed value to the tool as a refusal naming the argument', async () => {
    const r = await checkedArgs('t', schema)['~standard'].validate({ namespace: 'n', limit: 'ten' });
    expect(r).toEqual({ value: { ok: false, message: expect.stringMatching(/^invalid arguments for t: limit: /) } });
  });
});

describe('allowedHostnames', () => {
  it('accepts loopback names and the bind address; a wildcard bind adds the machine, never any name', () => {
    expect(allowedHostnames('127.0.0.1')).toEqual(['localhost', '127.0.0.1', '[::1]']);
    expect(allowedHostnames('10.1.2.3')).toContain('10.1.2.3');
    expect(allowedHostnames('::1')).toContain('[::1]');
    expect(allowedHostnames('127.0.0.1', ['memory.example.com'])).toEqual(['localhost', '127.0.0.1', '[::1]', 'memory.example.com']);
    expect(allowedHostnames('127.0.0.1')).not.toContain('memory.example.com');
    const wildcard = allowedHostnames('0.0.0.0');
    expect(wildcard).toEqual(expect.arrayContaining(['localhost', '127.0.0.1']));
    expect(wildcard).not.toContain('evil.example');
  });
});
