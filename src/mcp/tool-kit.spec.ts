import { AuthContext } from '../access/auth-context';
import { Capability } from '../access/capability';
import { allowedHostnames } from './mcp-http';
import { checkedArgs, requireToolAccess } from './tool-kit';
import { z } from 'zod';

const caller = (name: string, grants: Array<{ namespacePattern: string; capabilities: Capability[] }>) =>
  AuthContext.of({ tokenId: 't', principalId: 'p', name, grants });

const refusal = (f: () => void): { name: string; code: string; message: string } | undefined => {
  try {
    f();
    return undefined;
  } catch (err) {
    const e = err as { name: string; code: string; message: string };
    return { name: e.name, code: e.code, message: e.message };
  }
};

describe('requireToolAccess', () => {
  const search = { name: 'search_memory', capability: Capability.SEARCH, namespaced: true };
  const read = { name: 'get_fact', capability: Capability.READ, namespaced: false };

  it('lets a call through when the grant covers the namespace (admin implies search)', () => {
    const auth = caller('a', [{ namespacePattern: 'team/*', capabilities: [Capability.ADMIN] }]);
    expect(refusal(() => requireToolAccess(search, auth, { namespace: 'team/x' }))).toBeUndefined();
  });

  it("refuses another namespace as FORBIDDEN with GraphQL's message, naming the capability", () => {
    const auth = caller('agent', [{ namespacePattern: 'team/*', capabilities: [Capability.SEARCH] }]);
    expect(refusal(() => requireToolAccess(search, auth, { namespace: 'other/x' }))).toEqual({
      name: 'AccessException',
      code: 'FORBIDDEN',
      message: 'token "agent" lacks the "search" capability on namespace "other/x"; ask an admin for a grant',
    });
  });

  it('refuses a malformed namespace as bad input, not as a missing capability', () => {
    const auth = caller('a', [{ namespacePattern: '*', capabilities: [Capability.SEARCH] }]);
    expect(refusal(() => requireToolAccess(search, auth, { namespace: 'bad namespace!' }))).toMatchObject({ name: 'InputException', code: 'INVALID_ARGUMENT' });
  });

  it('for tools that take an id, refuses only a token holding the capability nowhere', () => {
    const somewhere = caller('r', [{ namespacePattern: 'a', capabilities: [Capability.READ] }]);
    const nowhere = caller('s', [{ namespacePattern: '*', capabilities: [Capability.SEARCH, Capability.LIST] }]);
    expect(refusal(() => requireToolAccess(read, somewhere, { id: 'f' }))).toBeUndefined();
    expect(refusal(() => requireToolAccess(read, nowhere, { id: 'f' }))).toMatchObject({ code: 'FORBIDDEN', message: expect.stringContaining('"read"') });
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
