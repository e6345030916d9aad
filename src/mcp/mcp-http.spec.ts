import { isMcpClientError, mcpErrorLogger } from './mcp-http';

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
