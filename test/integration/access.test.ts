import { createHash } from 'node:crypto';
import { Client } from 'pg';
import { uniqueNamespace } from '../support/stores';
import { createToken, gql, gqlOk, startTestApp, TestApp } from '../support/test-app';

const CREATE = `mutation($input: TokenInput!) { createToken(input: $input) { token info { id tokenPrefix grants { namespacePattern capabilities } } } }`;
const REVOKE = `mutation($id: ID!) { revokeToken(id: $id) }`;

describe('access: hashed tokens, delegated grants, revocation', () => {
  let t: TestApp;
  let sql: Client;
  const team = uniqueNamespace('team');

  beforeAll(async () => {
    t = await startTestApp();
    sql = new Client({ connectionString: t.databaseUrl });
    await sql.connect();
  });
  afterAll(async () => {
    await sql?.end();
    await t?.stop();
  });

  it('stores only a SHA-256 of each token, never the token itself', async () => {
    const { id, token } = await createToken(t, [{ namespacePattern: team, capabilities: ['READ'] }]);
    const { rows } = await sql.query(`SELECT token_hash, token_prefix FROM access.tokens WHERE id = $1`, [id]);
    expect(rows[0].token_hash).toEqual(createHash('sha256').update(token).digest());
    expect(token.startsWith(rows[0].token_prefix)).toBe(true);
    expect(rows[0].token_prefix.length).toBeLessThan(12);
    const dump = await sql.query(`SELECT row_to_json(t)::text AS j FROM access.tokens t UNION ALL SELECT row_to_json(g)::text FROM access.grants g`);
    for (const r of dump.rows) expect(r.j).not.toContain(token);
    for (const r of dump.rows) expect(r.j).not.toContain(t.adminToken);
  });

  it('lets an admin delegate only within the namespaces it administers', async () => {
    const teamAdmin = await createToken(t, [{ namespacePattern: `${team}/*`, capabilities: ['ADMIN'] }], 'team-admin');
    const ok = await gql(t.url, teamAdmin.token, CREATE, {
      input: { name: 'agent', grants: [{ namespacePattern: `${team}/agent-1`, capabilities: ['INGEST', 'READ'] }] },
    });
    expect(ok.errors).toBeUndefined();
    for (const grants of [
      [{ namespacePattern: '*', capabilities: ['READ'] }],
      [{ namespacePattern: `${team}x/*`, capabilities: ['READ'] }],
      [{ namespacePattern: `${team}/agent-1`, capabilities: ['APPROVE'] }],
    ]) {
      const res = await gql(t.url, teamAdmin.token, CREATE, { input: { name: 'escalate', grants } });
      expect(res.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    }
    const reader = await createToken(t, [{ namespacePattern: team, capabilities: ['READ', 'LIST', 'INGEST'] }], 'reader');
    const res = await gql(t.url, reader.token, CREATE, { input: { name: 'self-made', grants: [{ namespacePattern: team, capabilities: ['READ'] }] } });
    expect(res.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });

  it('rejects malformed grants with BAD_USER_INPUT', async () => {
    for (const grants of [[], [{ namespacePattern: 'a*b', capabilities: ['READ'] }], [{ namespacePattern: team, capabilities: [] }]]) {
      const res = await gql(t.url, t.adminToken, CREATE, { input: { name: 'bad', grants } });
      expect(res.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    }
  });

  it('revokes at once; only the holder or a covering admin may revoke', async () => {
    const victim = await createToken(t, [{ namespacePattern: team, capabilities: ['READ'] }], 'victim');
    const other = await createToken(t, [{ namespacePattern: uniqueNamespace('other'), capabilities: ['ADMIN'] }], 'other-admin');
    expect((await gql(t.url, other.token, REVOKE, { id: victim.id })).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await gqlOk<{ viewer: { name: string } }>(t.url, victim.token, `{ viewer { name } }`)).viewer.name).toBe('victim');
    expect((await gqlOk<{ revokeToken: boolean }>(t.url, t.adminToken, REVOKE, { id: victim.id })).revokeToken).toBe(true);
    expect((await gql(t.url, victim.token, `{ viewer { name } }`)).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect((await gqlOk<{ revokeToken: boolean }>(t.url, t.adminToken, REVOKE, { id: victim.id })).revokeToken).toBe(false);
    expect((await gql(t.url, t.adminToken, REVOKE, { id: '00000000-0000-0000-0000-000000000000' })).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const self = await createToken(t, [{ namespacePattern: team, capabilities: ['READ'] }], 'self');
    expect((await gqlOk<{ revokeToken: boolean }>(t.url, self.token, REVOKE, { id: self.id })).revokeToken).toBe(true);
  });

  it('refuses expired tokens', async () => {
    const res = await gqlOk<{ createToken: { token: string; info: { id: string } } }>(
      t.url,
      t.adminToken,
      `mutation($input: TokenInput!) { createToken(input: $input) { token info { id } } }`,
      {
        input: { name: 'short-lived', grants: [{ namespacePattern: team, capabilities: ['READ'] }], expiresAt: new Date(Date.now() + 1500).toISOString() },
      },
    );
    expect((await gql(t.url, res.createToken.token, `{ viewer { name } }`)).errors).toBeUndefined();
    await new Promise((r) => setTimeout(r, 1700));
    expect((await gql(t.url, res.createToken.token, `{ viewer { name } }`)).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });
});
