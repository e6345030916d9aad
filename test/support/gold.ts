import { eventually, gqlOk, TestApp } from './test-app';

export interface FinishedJob {
  status: string;
  message: string | null;
}

/** Queues a `promote` job for the namespace through the API and waits until it succeeds or fails. */
export async function runPromotion(t: TestApp, namespace: string, token: string = t.adminToken): Promise<FinishedJob> {
  const { promote } = await gqlOk<{ promote: { id: string } }>(t.url, token, `mutation($ns: String!) { promote(namespace: $ns) { id } }`, { ns: namespace });
  return eventually(
    async () => {
      const { job } = await gqlOk<{ job: FinishedJob }>(t.url, token, `query($id: ID!) { job(id: $id) { status message } }`, { id: promote.id });
      return job.status === 'succeeded' || job.status === 'failed' ? job : null;
    },
    `the promote job of ${namespace} to finish`,
    90_000,
  );
}

/** Waits until the namespace has no unprocessed outbox row: Silver and Gold are in Neo4j. */
export function outboxDrained(db: { query(sql: string, params: unknown[]): Promise<{ rows: Array<{ n: number }> }> }, namespace: string): Promise<true> {
  return eventually(
    async () => {
      const { rows } = await db.query(`SELECT count(*)::int AS n FROM ops.outbox WHERE processed_at IS NULL AND namespace = $1`, [namespace]);
      return rows[0]?.n === 0 ? true : null;
    },
    `the outbox of ${namespace} to drain`,
    90_000,
  );
}
