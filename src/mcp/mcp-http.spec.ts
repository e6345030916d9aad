import { EventEmitter } from 'node:events';
import { AuthContext } from '../access/auth-context';
import { TokenRevocations } from '../access/token-revocations';
import { endOnRevocation, isMcpClientError, mcpErrorLogger } from './mcp-http';

describe('mcpErrorLogger', () => {
  const run = (err: unknown) => {
    const logged: unknown[][] = [];
    const warned: Array<[Record<string, unknown>, string]> = [];
    mcpErrorLogger(
      (msg, e) => logged.push([msg, e]),
      (fields, msg) => warned.push([fields, msg]),
    )(err);
    return { logged, warned };
  };

  it('logs what a client sent wrong as code and message only, without a stack', () => {
    for (const err of [
      new Error('Parse error: Invalid JSON'),
      new Error('Not Acceptable: Client must accept both application/json and text/event-stream'),
      new Error('Unsupported Media Type: Content-Type must be application/json'),
      new Error('Invalid Request: Batch must not exceed 100 messages'),
      new Error('Rejected inbound request (invalid-json-rpc-body): Bad Request: the request body is not a valid JSON-RPC message'),
      new Error('Rejected inbound request (batch-with-invalid-element): Bad Request: JSON-RPC batch contains an invalid message'),
      Object.assign(new Error('whatever the SDK says'), { code: -32602 }),
    ]) {
      const { logged, warned } = run(err);
      expect(logged).toEqual([]);
      expect(warned).toHaveLength(1);
      const [fields] = warned[0] as [Record<string, unknown>, string];
      expect(Object.keys(fields).sort()).toEqual(['code', 'message']);
      expect(JSON.stringify(fields)).not.toMatch(/\bat \S+ \(|stack/);
    }
  });

  it('keeps the stack for a fault of the service', () => {
    const fault = new TypeError("Cannot read properties of undefined (reading 'x')");
    expect(isMcpClientError(fault)).toBe(false);
    const { logged, warned } = run(fault);
    expect(warned).toEqual([]);
    expect(logged).toEqual([['MCP request failed', fault]]);
  });
});

describe('endOnRevocation', () => {
  const principal = { tokenId: 't-1', principalId: 'p-1', name: 'agent', grants: [], expiresAt: null };
  const open = (revocations: TokenRevocations) => {
    const res = Object.assign(new EventEmitter(), { destroyed: 0, destroy: () => void (res.destroyed += 1) });
    const next = jest.fn();
    const req = { auth: { token: 'x', clientId: 'agent', scopes: [], extra: { auth: AuthContext.of(principal) } } };
    endOnRevocation(revocations)(req as never, res as never, next);
    expect(next).toHaveBeenCalledTimes(1);
    return res;
  };

  it('destroys a response still open when its token is revoked', () => {
    const revocations = new TokenRevocations();
    const res = open(revocations);
    expect(revocations.watchedTokens).toBe(1);
    revocations.revoked('t-1');
    expect(res.destroyed).toBe(1);
    expect(revocations.watchedTokens).toBe(0);
  });

  it('stops watching when the response closes first (no watcher outlives its request)', () => {
    const revocations = new TokenRevocations();
    const res = open(revocations);
    res.emit('close');
    expect(revocations.watchedTokens).toBe(0);
    revocations.revoked('t-1');
    expect(res.destroyed).toBe(0);
  });
});
