/**
 * Worker-thread entry of the ThreadedExtractor (src/silver/extractor-pool.ts): runs the offline
 * rule extractor, which is CPU-bound synchronous JavaScript, off the worker's main thread.
 */
import { parentPort } from 'node:worker_threads';
import { RuleExtractor } from '../infra/offline-models/rule-extractor';
import { ModelException } from './model.exception';
import type { ExtractRequest, ExtractResponse } from './extractor-pool';

const extractor = new RuleExtractor();
const port = parentPort;

port?.on('message', (req: ExtractRequest) => {
  extractor.extract(req.events, req.ctx).then(
    (result) => port.postMessage({ id: req.id, result } satisfies ExtractResponse),
    (err: unknown) =>
      port.postMessage({
        id: req.id,
        error: {
          message: err instanceof Error ? err.message : String(err),
          code: err instanceof ModelException ? err.code : undefined,
          rawOutput: err instanceof ModelException ? err.rawOutput : undefined,
        },
      } satisfies ExtractResponse),
  );
});
