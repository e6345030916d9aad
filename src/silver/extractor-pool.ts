import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { RuleExtractor } from '../infra/offline-models/rule-extractor';
import type { DeriveModels } from './derive.service';
import { ExtractionContext, ExtractionEvent, ExtractionResult, Extractor } from './model-ports';
import { ModelException, ModelExceptionCode } from './model.exception';

export interface ExtractRequest {
  id: number;
  events: ExtractionEvent[];
  ctx: ExtractionContext;
}

export type ExtractResponse =
  | { id: number; result: ExtractionResult; error?: undefined }
  | { id: number; result?: undefined; error: { message: string; code?: ModelExceptionCode; rawOutput?: string } };

interface Thread {
  worker: Worker;
  pending: Map<number, { resolve: (r: ExtractionResult) => void; reject: (e: Error) => void }>;
}

/** The compiled worker entry; absent when the sources run untranspiled (ts-jest), then nothing is threaded. */
const SCRIPT = path.join(__dirname, 'extractor.worker.js');

/**
 * The offline rule extractor on worker threads. It is synchronous CPU work (compromise, chrono,
 * the gazetteer), about half of a worker's time: on the event loop it stalls the database round
 * trips, the embedder and the writes of the other namespaces in flight. Here each call goes to
 * the thread with the fewest calls in flight, so namespaces derived in parallel extract in
 * parallel, on as many cores as threads. Results are the extractor's own (same class, same input).
 */
export class ThreadedExtractor implements Extractor {
  readonly model: string;
  private readonly threads: Thread[] = [];
  private nextId = 1;
  private closed = false;

  constructor(model: string, threads: number) {
    this.model = model;
    for (let i = 0; i < threads; i++) this.threads.push(this.spawn());
  }

  static available(): boolean {
    return fs.existsSync(SCRIPT);
  }

  async extract(events: ExtractionEvent[], ctx: ExtractionContext): Promise<ExtractionResult> {
    if (this.closed) throw new ModelException(ModelExceptionCode.UNAVAILABLE, 'the extractor threads were stopped');
    const thread = this.threads.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
    const id = this.nextId++;
    return new Promise<ExtractionResult>((resolve, reject) => {
      thread.pending.set(id, { resolve, reject });
      thread.worker.postMessage({ id, events, ctx } satisfies ExtractRequest);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.threads.map((t) => t.worker.terminate()));
  }

  private spawn(): Thread {
    const thread: Thread = { worker: new Worker(SCRIPT), pending: new Map() };
    thread.worker.on('message', (m: ExtractResponse) => {
      const call = thread.pending.get(m.id);
      thread.pending.delete(m.id);
      if (!call) return;
      if (m.error) call.reject(m.error.code ? new ModelException(m.error.code, m.error.message, m.error.rawOutput) : new Error(m.error.message));
      else call.resolve(m.result);
    });
    let dead = false;
    const fail = (err: Error) => {
      if (dead) return;
      dead = true;
      for (const call of thread.pending.values()) call.reject(new ModelException(ModelExceptionCode.UNAVAILABLE, `extractor thread failed: ${err.message}`));
      thread.pending.clear();
      // A dead thread is replaced, so one crash does not take the pool's capacity with it.
      const at = this.threads.indexOf(thread);
      if (!this.closed && at >= 0) this.threads[at] = this.spawn();
    };
    thread.worker.on('error', fail);
    thread.worker.on('exit', (code) => {
      if (!this.closed) fail(new Error(`exited with code ${code}`));
    });
    return thread;
  }
}

/**
 * The models with the offline rule extractor moved to `threads` worker threads (when compiled and
 * threads > 0); any other extractor (an OpenAI-compatible one waits on the network) is kept.
 */
export function withThreadedExtractor(models: DeriveModels, threads: number): { models: DeriveModels; close(): Promise<void> } {
  if (threads < 1 || !(models.extractor instanceof RuleExtractor) || !ThreadedExtractor.available()) return { models, close: async () => undefined };
  const extractor = new ThreadedExtractor(models.extractor.model, threads);
  return { models: { ...models, extractor }, close: () => extractor.close() };
}
