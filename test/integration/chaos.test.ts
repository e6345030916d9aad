import { runChaos } from '../../bench/chaos';
import { createTestDatabase } from '../support/stores';

/**
 * Issue 24 item 6, reduced: the chaos run of `npm run bench -- chaos` with three kill -9s (an
 * API, a worker and the local Neo4j, in a seeded random order and at random points) instead of
 * twenty. Real child processes (the compiled service: `npm run build`), one test database, a
 * Neo4j of its own (the shared test Neo4j is not killed).
 *
 * It does not fit the default suite: runs took 188 s and 306 s on the 2-core machine (a Neo4j
 * restart after kill -9 took 62 s and 124 s there under other load, 20 s when idle), so it runs
 * only with CHAOS_TEST=1 (`CHAOS_TEST=1 npx jest test/integration/chaos.test.ts`).
 */
const maybe = process.env.CHAOS_TEST ? describe : describe.skip;

maybe('chaos: kill -9 an API, a worker and Neo4j under load, lose nothing', () => {
  it('every acknowledged event in Bronze, no duplicate, every event derived, graph equal to a rebuild, overlays and approvals kept', async () => {
    const db = await createTestDatabase();
    try {
      const figures = await runChaos({
        kills: 3,
        seed: 24,
        postgresUrl: db.url,
        runtimeUrl: db.runtimeUrl,
        gapMs: [3000, 6000],
        settleTimeoutMs: 120_000,
        log: (m) => {
          if (process.env.CHAOS_LOG) process.stdout.write(`[chaos] ${m}\n`);
        },
      });
      process.stdout.write(`chaos (3 kills): ${JSON.stringify({ ...figures, kills: { ...figures.kills } })}\n`);
      const c = figures.checks;
      expect(figures.kills).toMatchObject({ total: 3, api: 1, worker: 1, neo4j: 1 });
      expect(c.acknowledgedEvents).toBeGreaterThan(20);
      expect({
        settled: figures.settle.settled,
        missing: c.acknowledgedMissingInBronze,
        otherId: c.acknowledgedWithOtherIdInBronze,
        duplicateEventKeys: c.duplicateEventKeys,
        duplicateFacts: c.duplicateFacts,
        notDerived: c.eventsNotDerived,
        withoutQueueRow: c.eventsWithoutQueueRow,
        deadLetters: c.deadLettersOpen,
        overlaysLost: c.overlaysLost,
        approvalsLost: c.approvalsLost,
        approvedNoLongerApproved: c.approvedNoLongerApproved,
        resendsWithOtherId: figures.load.duplicateResendsWithOtherId,
      }).toEqual({
        settled: true,
        missing: 0,
        otherId: 0,
        duplicateEventKeys: 0,
        duplicateFacts: 0,
        notDerived: 0,
        withoutQueueRow: 0,
        deadLetters: 0,
        overlaysLost: 0,
        approvalsLost: 0,
        approvedNoLongerApproved: 0,
        resendsWithOtherId: 0,
      });
      expect(c.graph.map((g) => [g.namespace, g.consistent, g.equalToRebuild])).toEqual(c.graph.map((g) => [g.namespace, true, true]));
      expect(figures.goldAfter.overlays).toBe(figures.goldBefore.overlays);
      expect(figures.goldAfter.approvals).toBe(figures.goldBefore.approvals);
      expect(figures.ok).toBe(true);
    } finally {
      await db.drop();
    }
  }, 600_000);
});
