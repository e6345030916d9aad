import { Stage } from '../../src/platform/stages';
import { eventually, gqlOk, startTestApp, TestApp } from '../support/test-app';
import { uniqueNamespace } from '../support/stores';

interface StageView {
  running: boolean;
  stalled: boolean;
  steps: number;
  lastStepAt: string | null;
  lastError: { at: string; message: string } | null;
  failingSince: string | null;
}
interface Health {
  status: string;
  postgres: { ok: boolean };
  neo4j: { ok: boolean };
  workers: { ok: boolean; runsHere: boolean; stallSeconds: number; stages: Record<string, StageView> };
  lags: { ok: boolean; derivation: { pending: number; oldestSeconds: number }; outbox: { pending: number; oldestSeconds: number }; deadLettersOpen: number };
}

const health = async (url: string): Promise<{ status: number; body: Health }> => {
  const res = await fetch(`${url}/health`);
  return { status: res.status, body: (await res.json()) as Health };
};

/**
 * /health tells the truth about this process (docs/operations.md "Health"): the stores, each
 * background stage (running, its last step, its last error), the pipeline's lags; a stage whose
 * steps keep failing for HEALTH_STALL_SECONDS turns it 503, a lag does not.
 */
describe('/health: stores, workers and lags', () => {
  let t: TestApp;
  const ns = uniqueNamespace('health');

  beforeAll(async () => {
    t = await startTestApp({ OFFLINE_EMBEDDER: 'hashing', DERIVE_MAX_WAIT_MS: '0', DERIVE_POLL_MS: '50', HEALTH_STALL_SECONDS: '2' });
  });

  afterAll(async () => {
    await t?.stop();
  });

  it('reports each background stage with its last step, and the lags of derivation and the outbox', async () => {
    const { status, body } = await eventually(async () => {
      const h = await health(t.url);
      return h.body.workers.stages.derivation?.lastStepAt ? h : undefined;
    }, 'a derivation step');
    expect(status).toBe(200);
    expect(body).toMatchObject({ status: 'ok', postgres: { ok: true }, neo4j: { ok: true }, workers: { ok: true, runsHere: true, stallSeconds: 2 } });
    expect(Object.keys(body.workers.stages)).toEqual(expect.arrayContaining(['projector', 'derivation', 'jobs', 'chain-sealer']));
    for (const [name, s] of Object.entries(body.workers.stages)) {
      expect([name, s.running, s.stalled, s.lastError]).toEqual([name, true, false, null]);
    }
    expect(Date.now() - Date.parse(body.workers.stages.derivation?.lastStepAt ?? '')).toBeLessThan(60_000);

    // A lag is reported (and never turns /health 503): derivation paused, one event waits.
    const derivation = t.app.stages.get('derivation');
    await derivation?.stop();
    try {
      await gqlOk(
        t.url,
        t.adminToken,
        `mutation($ns: String!) { ingestEvent(input: { namespace: $ns, source: "h", sourceEventId: "1", kind: MESSAGE, content: "waiting" }) { status } }`,
        { ns },
      );
      await new Promise((r) => setTimeout(r, 1_100));
      const waiting = await health(t.url);
      expect(waiting.body.lags.derivation.pending).toBeGreaterThanOrEqual(1);
      expect(waiting.body.lags.derivation.oldestSeconds).toBeGreaterThanOrEqual(1);
      // A stopped stage is not running, and that is a stall.
      expect(waiting.body.workers.stages.derivation).toMatchObject({ running: false, stalled: true });
      expect(waiting.status).toBe(503);
    } finally {
      derivation?.start();
    }
    const drained = await eventually(async () => {
      const h = await health(t.url);
      return h.body.lags.derivation.pending === 0 && h.status === 200 ? h : undefined;
    }, 'the derivation queue drained');
    expect(drained.body.lags.derivation.oldestSeconds).toBe(0);
  });

  it('turns 503 when a stage has failed every step for HEALTH_STALL_SECONDS, with its last error, and 200 once it steps again', async () => {
    let failing = true;
    const flaky: Stage = {
      name: 'flaky',
      wakeOn: [],
      pollMs: 100,
      step: async () => {
        if (failing) throw new Error('the store refused: connection reset');
        return false;
      },
    };
    const handle = t.app.stages.register(flaky);
    handle.start();
    try {
      const early = await eventually(async () => {
        const h = await health(t.url);
        return h.body.workers.stages.flaky?.lastError ? h : undefined;
      }, 'the first failed step');
      // Failing, but not for HEALTH_STALL_SECONDS yet.
      expect(early.status).toBe(200);
      expect(early.body.workers.stages.flaky).toMatchObject({ running: true, stalled: false, lastError: { message: 'the store refused: connection reset' } });
      const stalled = await eventually(async () => {
        const h = await health(t.url);
        return h.status === 503 ? h : undefined;
      }, '503 after HEALTH_STALL_SECONDS of failures');
      expect(stalled.body).toMatchObject({ status: 'degraded', workers: { ok: false, stages: { flaky: { stalled: true } } }, postgres: { ok: true } });
      expect(stalled.body.workers.stages.flaky?.failingSince).not.toBeNull();
      failing = false;
      const recovered = await eventually(async () => {
        const h = await health(t.url);
        return h.status === 200 ? h : undefined;
      }, '200 once the stage steps again');
      expect(recovered.body.workers.stages.flaky).toMatchObject({
        stalled: false,
        failingSince: null,
        lastError: { message: 'the store refused: connection reset' },
      });
    } finally {
      await handle.stop();
    }
  });
});
