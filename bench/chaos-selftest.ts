import { Driver } from 'neo4j-driver';
import { Client } from 'pg';
import { backlog, graphChecks, storeChecks } from './chaos-checks';
import { Acks } from './chaos-load';
import { chainVerify, compareSilver, factProvenance, markerCheck, retentionCheck } from './chaos-trust';

/** One check of the chaos run with a defect planted for it: `detected` must be true. */
export interface PlantedResult {
  check: string;
  defect: string;
  detected: boolean;
  /** What the check reported on the planted state. */
  reported: unknown;
}

export interface SelfTestContext {
  pg: Client;
  driver: Driver;
  urls: () => string[];
  adminToken: string;
  ownerUrl: string;
  runtimeUrl: string;
  namespaces: readonly string[];
  acks: Acks;
  /** The fresh derivation of the surviving Bronze (factProvenance lines). */
  fresh: readonly string[];
  marker: string;
  erasedId: string;
  retained: { namespace: string; before: string; acknowledged: number; reportedDropped: number };
  log: (msg: string) => void;
}

/** INSERT … SELECT of one row of `table` with some columns replaced (SQL expressions), generated columns left out. */
async function copyRowSql(c: Client, table: string, overrides: Record<string, string>, where: string): Promise<string> {
  const [schema, name] = table.split('.') as [string, string];
  const { rows } = await c.query<{ column_name: string }>(
    `SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 AND is_generated = 'NEVER' ORDER BY ordinal_position`,
    [schema, name],
  );
  const cols = rows.map((r) => r.column_name);
  return `INSERT INTO ${table} (${cols.map((x) => `"${x}"`).join(', ')}) SELECT ${cols.map((x) => overrides[x] ?? `"${x}"`).join(', ')} FROM ${table} WHERE ${where}`;
}

/**
 * Plants each check's defect and runs that check on it. PostgreSQL defects are planted inside a
 * transaction (triggers off: `session_replication_role = replica`, as the owner) that is rolled
 * back; the chain and Neo4j defects are written, checked and undone.
 */
export async function selfTest(ctx: SelfTestContext): Promise<PlantedResult[]> {
  const { pg, namespaces, acks } = ctx;
  const out: PlantedResult[] = [];
  const ns = namespaces[0] as string;
  const acked = [...acks.events.values()].filter((e) => e.id !== ctx.erasedId);
  const event = acked.find((e) => e.namespace === ns) ?? (acked[0] as (typeof acked)[number]);
  const liveFact = (
    await pg.query<{ id: string }>(`SELECT id FROM silver.facts WHERE namespace = $1 AND retired_at IS NULL AND valid_to IS NULL ORDER BY id LIMIT 1`, [ns])
  ).rows[0]?.id;
  const overlay = [...acks.overlays][0];
  const requested = [...acks.approvalsRequested][0];
  const approved = [...acks.approvalsApproved][0];

  const inTx = async (
    check: string,
    defect: string,
    plant: (c: Client) => Promise<void>,
    run: (c: Client) => Promise<{ failed: boolean; reported: unknown }>,
  ) => {
    await pg.query('BEGIN');
    try {
      await pg.query(`SET LOCAL session_replication_role = replica`);
      await plant(pg);
      const r = await run(pg);
      out.push({ check, defect, detected: r.failed, reported: r.reported });
    } catch (err) {
      out.push({ check, defect, detected: false, reported: `self-test error: ${String(err).slice(0, 300)}` });
    } finally {
      await pg.query('ROLLBACK');
    }
    ctx.log(`self-test ${check}: ${out[out.length - 1]?.detected ? 'detected' : 'NOT DETECTED'}`);
  };
  const stores = async (c: Client) => storeChecks(c, namespaces, acks);

  await inTx(
    'acknowledgedMissingInBronze',
    `DELETE the acknowledged event ${event.id} from bronze.events`,
    async (c) => void (await c.query(`DELETE FROM bronze.events WHERE id = $1`, [event.id])),
    async (c) => {
      const s = await stores(c);
      return { failed: s.acknowledgedMissingInBronze > 0, reported: { acknowledgedMissingInBronze: s.acknowledgedMissingInBronze } };
    },
  );
  await inTx(
    'duplicateEventKeys / eventsNotUnderTheirKey',
    `INSERT a second bronze.events row with the key of ${event.id} under a new id`,
    async (c) => void (await c.query(await copyRowSql(c, 'bronze.events', { id: 'gen_random_uuid()' }, `id = '${event.id}'`))),
    async (c) => {
      const s = await stores(c);
      return {
        failed: s.duplicateEventKeys > 0 && s.eventsNotUnderTheirKey > 0,
        reported: { duplicateEventKeys: s.duplicateEventKeys, duplicateEventRows: s.duplicateEventRows, eventsNotUnderTheirKey: s.eventsNotUnderTheirKey },
      };
    },
  );
  await inTx(
    'acknowledgedWithOtherIdInBronze',
    `point the key of ${event.id} in bronze.event_keys at another id`,
    async (c) => void (await c.query(`UPDATE bronze.event_keys SET event_id = gen_random_uuid() WHERE event_id = $1`, [event.id])),
    async (c) => {
      const s = await stores(c);
      return { failed: s.acknowledgedWithOtherIdInBronze > 0, reported: { acknowledgedWithOtherIdInBronze: s.acknowledgedWithOtherIdInBronze } };
    },
  );
  if (liveFact)
    await inTx(
      'duplicateFacts',
      `copy the live fact ${liveFact} with its sources under a new id`,
      async (c) => {
        await c.query(`CREATE TEMP TABLE chaos_new_fact ON COMMIT DROP AS SELECT gen_random_uuid() AS id`);
        await c.query(await copyRowSql(c, 'silver.facts', { id: '(SELECT id FROM chaos_new_fact)' }, `id = '${liveFact}'`));
        await c.query(await copyRowSql(c, 'silver.fact_sources', { fact_id: '(SELECT id FROM chaos_new_fact)' }, `fact_id = '${liveFact}'`));
      },
      async (c) => {
        const s = await stores(c);
        return { failed: s.duplicateFacts > 0, reported: { duplicateFacts: s.duplicateFacts } };
      },
    );
  await inTx(
    'eventsNotDerived',
    `set the derivation of ${event.id} back to pending`,
    async (c) => void (await c.query(`UPDATE ops.derivation_queue SET status = 'pending' WHERE event_id = $1`, [event.id])),
    async (c) => {
      const s = await stores(c);
      const b = await backlog(c, namespaces);
      return { failed: s.eventsNotDerived > 0 && b.pending > 0, reported: { eventsNotDerived: s.eventsNotDerived, backlogPending: b.pending } };
    },
  );
  await inTx(
    'eventsWithoutQueueRow',
    `DELETE the derivation queue row of ${event.id}`,
    async (c) => void (await c.query(`DELETE FROM ops.derivation_queue WHERE event_id = $1`, [event.id])),
    async (c) => {
      const s = await stores(c);
      return { failed: s.eventsWithoutQueueRow > 0, reported: { eventsWithoutQueueRow: s.eventsWithoutQueueRow } };
    },
  );
  await inTx(
    'deadLettersOpen',
    `INSERT an open dead letter for ${event.id}`,
    async (c) =>
      void (await c.query(`INSERT INTO silver.dead_letters (namespace, event_id, error_code, error, attempts) VALUES ($1, $2, 'PLANTED', 'planted', 1)`, [
        event.namespace,
        event.id,
      ])),
    async (c) => {
      const s = await stores(c);
      return { failed: s.deadLettersOpen > 0, reported: { deadLettersOpen: s.deadLettersOpen } };
    },
  );
  if (overlay)
    await inTx(
      'overlaysLost',
      `DELETE the acknowledged overlay ${overlay}`,
      async (c) => void (await c.query(`DELETE FROM gold.overlays WHERE id = $1`, [overlay])),
      async (c) => {
        const s = await stores(c);
        return { failed: s.overlaysLost > 0, reported: { overlaysLost: s.overlaysLost } };
      },
    );
  if (requested)
    await inTx(
      'approvalsLost',
      `DELETE the acknowledged approval request ${requested}`,
      async (c) => void (await c.query(`DELETE FROM access.approval_requests WHERE id = $1`, [requested])),
      async (c) => {
        const s = await stores(c);
        return { failed: s.approvalsLost > 0, reported: { approvalsLost: s.approvalsLost } };
      },
    );
  if (approved)
    await inTx(
      'approvedNoLongerApproved',
      `set the approved request ${approved} to REJECTED`,
      async (c) => void (await c.query(`UPDATE access.approval_requests SET status = 'REJECTED' WHERE id = $1`, [approved])),
      async (c) => {
        const s = await stores(c);
        return { failed: s.approvedNoLongerApproved > 0, reported: { approvedNoLongerApproved: s.approvedNoLongerApproved } };
      },
    );
  if (liveFact)
    await inTx(
      'silverEqualsFreshDerivation',
      `append " (planted)" to the statement of the live fact ${liveFact}`,
      async (c) => void (await c.query(`UPDATE silver.facts SET statement = statement || ' (planted)' WHERE id = $1`, [liveFact])),
      async (c) => {
        const s = compareSilver(await factProvenance(c, namespaces), ctx.fresh);
        return { failed: !s.ok, reported: { onlyLive: s.onlyLive, onlyFresh: s.onlyFresh, example: s.examplesOnlyLive[0] } };
      },
    );
  await inTx(
    'erasedTextNowhere (Bronze)',
    `write the erased text back into the tombstone row ${ctx.erasedId}`,
    async (c) => void (await c.query(`UPDATE bronze.events SET content = $2 WHERE id = $1`, [ctx.erasedId, `My sister Ines lives in ${ctx.marker}`])),
    async (c) => {
      const m = await markerCheck(c, ctx.driver, ctx.marker, ctx.erasedId);
      return { failed: m.found > 0, reported: { postgres: m.postgres, bronzeRowScrubbed: m.bronzeRowScrubbed } };
    },
  );
  if (liveFact)
    await inTx(
      'erasedTextNowhere (Silver)',
      `put the erased text into the statement of the fact ${liveFact}`,
      async (c) => void (await c.query(`UPDATE silver.facts SET statement = $2 WHERE id = $1`, [liveFact, `Ines lives in ${ctx.marker}`])),
      async (c) => {
        const m = await markerCheck(c, ctx.driver, ctx.marker, ctx.erasedId);
        return { failed: m.found > 0, reported: { postgres: m.postgres } };
      },
    );
  {
    const check = 'erasedTextNowhere (Neo4j)';
    try {
      await ctx.driver.executeQuery(`MATCH (n) WHERE n.namespace = $ns WITH n LIMIT 1 SET n.chaosPlanted = $text`, { ns, text: `lives in ${ctx.marker}` });
      const m = await markerCheck(pg, ctx.driver, ctx.marker, ctx.erasedId);
      out.push({
        check,
        defect: `set a property holding the erased text on a node of ${ns}`,
        detected: m.neo4jNodes > 0,
        reported: { neo4jNodes: m.neo4jNodes },
      });
    } finally {
      await ctx.driver.executeQuery(`MATCH (n) WHERE n.chaosPlanted IS NOT NULL REMOVE n.chaosPlanted`);
    }
    ctx.log(`self-test ${check}: ${out[out.length - 1]?.detected ? 'detected' : 'NOT DETECTED'}`);
  }
  await inTx(
    'retentionRemovedWhatItShould',
    `re-create the dropped month's partition and put an event of ${ctx.retained.namespace} in it`,
    async (c) => {
      await c.query(`CREATE TABLE bronze.chaos_planted_partition PARTITION OF bronze.events FOR VALUES FROM ('2026-03-01') TO ('2026-04-01')`);
      await c.query(
        await copyRowSql(
          c,
          'bronze.events',
          { id: 'gen_random_uuid()', namespace: `'${ctx.retained.namespace}'`, source_event_id: `'planted'`, occurred_at: `'2026-03-15T00:00:00Z'` },
          `id = '${event.id}'`,
        ),
      );
    },
    async (c) => {
      const r = await retentionCheck(c, ctx.retained.namespace, ctx.retained.before, ctx.retained.acknowledged, ctx.retained.reportedDropped);
      return { failed: !r.ok, reported: { retainedEventsLeft: r.retainedEventsLeft, eventsBeforeCutLeft: r.eventsBeforeCutLeft } };
    },
  );
  {
    // The CLI reads committed rows: the edit is committed, verified, and undone.
    const check = 'chainVerify';
    const { rows } = await pg.query<{ content: string }>(`SELECT content FROM bronze.events WHERE id = $1`, [event.id]);
    const original = rows[0]?.content as string;
    const edit = async (content: string) => {
      await pg.query('BEGIN');
      await pg.query(`SET LOCAL session_replication_role = replica`);
      await pg.query(`UPDATE bronze.events SET content = $2 WHERE id = $1`, [event.id, content]);
      await pg.query('COMMIT');
    };
    try {
      await edit(`${original} (edited by the owner)`);
      const v = await chainVerify(ctx.ownerUrl, ctx.runtimeUrl, event.namespace);
      out.push({
        check,
        defect: `edit the content of the Bronze event ${event.id} as the owner`,
        detected: !v.ok,
        reported: { exitCode: v.exitCode, output: v.output },
      });
    } finally {
      await edit(original);
    }
    ctx.log(`self-test ${check}: ${out[out.length - 1]?.detected ? 'detected' : 'NOT DETECTED'}`);
  }
  {
    const check = 'graph consistent / equalToRebuild';
    try {
      await ctx.driver.executeQuery(`CREATE (:Fact {namespace: $ns, id: 'chaos-planted-fact', statement: 'planted'})`, { ns });
      const [g] = await graphChecks(pg, ctx.driver, ctx.urls, ctx.adminToken, [ns]);
      out.push({ check, defect: `create an extra Fact node in ${ns}`, detected: !!g && (!g.consistent || !g.equalToRebuild), reported: g });
    } catch (err) {
      out.push({ check, defect: `create an extra Fact node in ${ns}`, detected: false, reported: `self-test error: ${String(err).slice(0, 300)}` });
    } finally {
      await ctx.driver.executeQuery(`MATCH (n {id: 'chaos-planted-fact'}) DETACH DELETE n`);
    }
    ctx.log(`self-test ${check}: ${out[out.length - 1]?.detected ? 'detected' : 'NOT DETECTED'}`);
  }
  return out;
}
