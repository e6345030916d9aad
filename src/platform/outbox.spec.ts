import { enqueueOutbox, outboxFrom, outboxRows } from './outbox';
import { Sql } from './postgres/sql';

/** An executor that records statements instead of running them. */
function recorder(): { tx: Sql; statements: Array<{ text: string; params: readonly unknown[] }> } {
  const statements: Array<{ text: string; params: readonly unknown[] }> = [];
  const tx = {
    execute: async (text: string, params: readonly unknown[] = []) => {
      statements.push({ text, params });
      return 0;
    },
  } as unknown as Sql;
  return { tx, statements };
}

describe('outbox', () => {
  it('writes any number of rows in one statement, in the order given', async () => {
    const { tx, statements } = recorder();
    await enqueueOutbox(tx, [...outboxRows('ns', 'entity', ['e1'], { jobId: 'j' }), ...outboxRows('ns', 'fact', ['f1', 'f2'], { jobId: 'j' })]);
    expect(statements).toHaveLength(1);
    const [{ text, params }] = statements as [(typeof statements)[number]];
    expect(text).toBe('SELECT ops.enqueue_outbox($1::jsonb)');
    expect(JSON.parse(params[0] as string)).toEqual([
      { namespace: 'ns', type: 'entity', id: 'e1', payload: { id: 'e1', jobId: 'j' } },
      { namespace: 'ns', type: 'fact', id: 'f1', payload: { id: 'f1', jobId: 'j' } },
      { namespace: 'ns', type: 'fact', id: 'f2', payload: { id: 'f2', jobId: 'j' } },
    ]);
  });

  it('sends no statement for no rows', async () => {
    const { tx, statements } = recorder();
    await enqueueOutbox(tx, []);
    expect(statements).toEqual([]);
  });

  it('a tag cannot replace the id the projector re-reads', () => {
    expect(outboxRows('ns', 'fact', ['f1'], { id: 'other' })[0]?.payload).toEqual({ id: 'f1' });
  });

  it('queues the rows of a query through the same function, in their ord order', () => {
    const text = outboxFrom(`SELECT 'ns' AS namespace, 'fact' AS type, 'f1' AS id, '{}'::jsonb AS payload, 1 AS ord`);
    expect(text).toMatch(/^SELECT ops\.enqueue_outbox\(jsonb_agg\(/);
    expect(text).toMatch(/ORDER BY o\.ord\)\) AS queued\s+FROM \(SELECT 'ns' AS namespace/);
  });
});
