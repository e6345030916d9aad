import http from 'node:http';
import { AddressInfo } from 'node:net';
import express from 'express';
import { jsonErrorHandler, notFound, routeLabel } from './http-transport';

describe('jsonErrorHandler', () => {
  const logged: Array<{ fields: Record<string, unknown>; msg: string }> = [];
  let server: http.Server;
  let url: string;

  beforeAll(async () => {
    const app = express();
    app.post('/graphql', express.json({ limit: 64 }), (_req, res) => res.json({ data: {} }));
    app.get('/boom', () => {
      throw new Error('secret detail at /srv/app/src/thing.ts:12');
    });
    app.use(notFound);
    app.use(jsonErrorHandler(64, (fields, msg) => logged.push({ fields, msg })));
    server = http.createServer(app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => new Promise<void>((r) => server.close(() => r())));
  beforeEach(() => logged.splice(0));

  it('logs a refused body as one structured entry without the body', async () => {
    const secret = '{"query": "mutation { createToken(input: {name: \\"hunter2\\"}) ';
    const res = await fetch(`${url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: secret });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ errors: [{ message: expect.stringMatching(/not valid JSON/), extensions: { code: 'BAD_USER_INPUT' } }] });
    expect(logged).toHaveLength(1);
    expect(logged[0]?.fields).toMatchObject({ status: 400, code: 'BAD_USER_INPUT', kind: 'entity.parse.failed', method: 'POST', path: '/graphql' });
    expect(JSON.stringify(logged)).not.toContain('hunter2');
    expect(JSON.stringify(logged).split('\n')).toHaveLength(1);
  });

  it('answers an unexpected failure with a bare INTERNAL_SERVER_ERROR, never a stack or a path', async () => {
    const res = await fetch(`${url}/boom`);
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(JSON.parse(text)).toEqual({
      errors: [{ message: 'internal error: the service logged the details', extensions: { code: 'INTERNAL_SERVER_ERROR' } }],
    });
    expect(text).not.toContain('/srv/app');
  });
});

describe('routeLabel', () => {
  it('keeps the label set to the served routes', () => {
    expect(['/graphql', '/graphiql/assets/x.js', '/health', '/metrics', '/', '/wp-admin', '/graphqlx'].map(routeLabel)).toEqual([
      '/graphql',
      '/graphiql',
      '/health',
      '/metrics',
      '/',
      'other',
      'other',
    ]);
  });
});
