/**
 * An onnxruntime-node session of a sentence encoder, run in a worker thread (onnx-worker.js):
 * `pool` takes batches of token ids and returns one pooled, L2-normalised vector per row; all the
 * batches of one call travel in one message, so a call of n texts costs one round trip, not n.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';

export type Pooling = 'cls' | 'mean';

export interface OnnxSessionOptions {
  /**
   * onnxruntime intra-op threads (default 1; 0: onnxruntime's choice, all cores). One thread costs
   * a third of the CPU per text of two on this 2-core machine (batch 1, e5-small-v2-q8: 19 vs 56 ms,
   * docs/silver.md "Throughput"): the second thread mostly spins, and the cores are wanted by the
   * extractor, Postgres and Neo4j. The thread count does not change a vector (measured: identical).
   */
  threads?: number;
}

/** One padded batch: `seq` columns per row, `lengths` the real tokens of each row. */
interface WorkerBatch {
  ids: BigInt64Array;
  mask: BigInt64Array;
  seq: number;
  lengths: number[];
}

/** What onnx-session.ts posts to the worker for one call: its batches, run one after another. */
interface WorkerRequest {
  id: number;
  batches: WorkerBatch[];
  pooling: Pooling;
}

/** What the worker posts back: once `ready`, then one reply per request. */
interface WorkerReply {
  ready?: boolean;
  id?: number;
  vectors?: Float32Array;
  dims?: number;
  error?: string;
}

/** Found next to this module: src/ under jest, dist/src/ once built (tsc copies it, allowJs). */
function workerFile(): string {
  const file = path.join(__dirname, 'onnx-worker.js');
  if (!fs.existsSync(file)) throw new Error(`embedder: ${file} is missing (build with \`npm run build\`)`);
  return file;
}

export class OnnxSession {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (r: WorkerReply) => void; reject: (e: Error) => void }>();
  private failed: Error | null = null;

  private constructor(
    private readonly worker: Worker,
    private readonly label: string,
  ) {
    worker.on('message', (m: WorkerReply) => {
      const p = m.id !== undefined ? this.pending.get(m.id) : undefined;
      if (!p) return;
      this.pending.delete(m.id!);
      if (this.pending.size === 0) this.worker.unref();
      if (m.error || !m.vectors || !m.dims) p.reject(new Error(`${label}: inference failed: ${m.error ?? 'no output'}`));
      else p.resolve(m);
    });
    const failAll = (err: Error): void => {
      this.failed ??= err;
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    };
    worker.on('error', (e) => failAll(new Error(`${label}: worker failed: ${e.message}`)));
    worker.on('exit', (code) => failAll(new Error(`${label}: worker exited (${code})`)));
    // An idle session does not keep the process alive.
    worker.unref();
  }

  /** Starts the worker and opens the model; fails with onnxruntime's message when it cannot. */
  static async open(onnxPath: string, label: string, opts: OnnxSessionOptions = {}): Promise<OnnxSession> {
    const threads = opts.threads ?? 1;
    const sessionOptions = {
      executionProviders: ['cpu'],
      graphOptimizationLevel: 'all',
      ...(threads > 0 ? { intraOpNumThreads: threads } : {}),
      // Threads that spin between operators burn the cores the rest of the worker needs.
      extra: { session: { intra_op: { allow_spinning: '0' } } },
    };
    const worker = new Worker(workerFile(), { workerData: { onnxPath, sessionOptions } });
    await new Promise<void>((resolve, reject) => {
      const onMessage = (m: WorkerReply): void => {
        if (m.ready === undefined) return;
        worker.off('message', onMessage);
        worker.off('error', onError);
        if (m.ready) return resolve();
        void worker.terminate();
        reject(new Error(`${label}: onnxruntime could not open ${onnxPath}: ${m.error}`));
      };
      const onError = (e: Error): void => reject(new Error(`${label}: onnxruntime worker failed to start: ${e.message}`));
      worker.on('message', onMessage);
      worker.once('error', onError);
    });
    return new OnnxSession(worker, label);
  }

  /** One vector per row of each batch (token ids, unpadded; rows padded to their batch's longest), in one round trip. */
  async pool(batches: number[][][], pooling: Pooling): Promise<Float32Array[][]> {
    if (this.failed) throw this.failed;
    if (batches.length === 0) return [];
    const packed: WorkerBatch[] = batches.map((batch) => {
      const seq = Math.max(...batch.map((x) => x.length));
      const ids = new BigInt64Array(batch.length * seq);
      const mask = new BigInt64Array(batch.length * seq);
      batch.forEach((tokens, r) => {
        tokens.forEach((t, c) => {
          ids[r * seq + c] = BigInt(t);
          mask[r * seq + c] = 1n;
        });
      });
      return { ids, mask, seq, lengths: batch.map((x) => x.length) };
    });
    const id = this.nextId++;
    const request: WorkerRequest = { id, batches: packed, pooling };
    const reply = await new Promise<WorkerReply>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.ref();
      this.worker.postMessage(
        request,
        packed.flatMap((b) => [b.ids.buffer as ArrayBuffer, b.mask.buffer as ArrayBuffer]),
      );
    });
    const { vectors, dims } = reply as Required<Pick<WorkerReply, 'vectors' | 'dims'>>;
    // The reply holds every row of every batch, in order.
    let row = 0;
    return batches.map((batch) =>
      batch.map(() => {
        const v = vectors.subarray(row * dims, (row + 1) * dims);
        row += 1;
        return v;
      }),
    );
  }

  /** Stops the worker; later calls fail. */
  async close(): Promise<void> {
    this.failed ??= new Error(`${this.label}: session closed`);
    await this.worker.terminate();
  }
}

/**
 * Several sessions of one model, each on its own worker thread with its own intra-op threads:
 * a call's batches are shared out among them (the least loaded session takes the next batch,
 * counted in padded tokens, calls in flight included) and run at the same time, so one `embed`
 * of many texts uses as many cores as there are sessions, without intra-op threads that spin.
 * Vectors do not change: each batch runs whole on one session, and a session's vector does not
 * depend on its thread (see OnnxSessionOptions).
 */
export class OnnxSessionPool {
  /** Padded tokens each session has been given and not yet answered. */
  private readonly load: number[];
  /** Batches each session has run since it opened (tests read it). */
  readonly batchesRun: number[];

  private constructor(private readonly sessions: OnnxSession[]) {
    this.load = sessions.map(() => 0);
    this.batchesRun = sessions.map(() => 0);
  }

  /** Opens `sessions` (default 1) sessions of the model; fails, closing those opened, when one cannot open. */
  static async open(onnxPath: string, label: string, opts: OnnxSessionOptions & { sessions?: number } = {}): Promise<OnnxSessionPool> {
    const n = Math.max(1, opts.sessions ?? 1);
    const opened = await Promise.allSettled(Array.from({ length: n }, () => OnnxSession.open(onnxPath, label, opts)));
    const failed = opened.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) {
      await Promise.all(opened.map((r) => (r.status === 'fulfilled' ? r.value.close() : undefined)));
      throw failed.reason;
    }
    return new OnnxSessionPool(opened.map((r) => (r as PromiseFulfilledResult<OnnxSession>).value));
  }

  get size(): number {
    return this.sessions.length;
  }

  /** As OnnxSession.pool: one vector per row of each batch, in order. */
  async pool(batches: number[][][], pooling: Pooling): Promise<Float32Array[][]> {
    const share: number[][] = this.sessions.map(() => []);
    const cost = batches.map((b) => b.length * Math.max(0, ...b.map((x) => x.length)));
    const given = this.load.slice();
    // Longest first, each to the least loaded session: shares of nearly equal work.
    for (const i of batches.map((_, i) => i).sort((a, b) => (cost[b] as number) - (cost[a] as number))) {
      const s = given.indexOf(Math.min(...given));
      (share[s] as number[]).push(i);
      given[s] = (given[s] as number) + (cost[i] as number);
    }
    const out: Float32Array[][] = new Array(batches.length);
    await Promise.all(
      share.map(async (idx, s) => {
        if (idx.length === 0) return;
        idx.sort((a, b) => a - b);
        const tokens = idx.reduce((n, i) => n + (cost[i] as number), 0);
        this.load[s] = (this.load[s] as number) + tokens;
        try {
          const vectors = await (this.sessions[s] as OnnxSession).pool(
            idx.map((i) => batches[i] as number[][]),
            pooling,
          );
          idx.forEach((i, k) => (out[i] = vectors[k] as Float32Array[]));
          this.batchesRun[s] = (this.batchesRun[s] as number) + idx.length;
        } finally {
          this.load[s] = (this.load[s] as number) - tokens;
        }
      }),
    );
    return out;
  }

  async close(): Promise<void> {
    await Promise.all(this.sessions.map((s) => s.close()));
  }
}
