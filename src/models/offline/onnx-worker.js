// @ts-check
/**
 * Worker thread that owns one onnxruntime-node session of a BERT-style sentence encoder
 * (onnx-session.ts starts it). onnxruntime-node's `run` computes on the calling thread, so
 * inference (tens to hundreds of ms per batch) stays off the service's event loop; it also keeps
 * onnxruntime out of jest's sandbox, whose typed arrays come from another realm.
 *
 * Plain JavaScript (copied to dist/ by tsc's allowJs) so the same file runs from src/ under jest
 * and from dist/ in production. Messages: see onnx-session.ts (WorkerRequest, WorkerReply).
 */
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const ort = require('onnxruntime-node');

if (!parentPort) throw new Error('onnx-worker.js runs as a worker thread only');
const port = parentPort;

/**
 * Pools the hidden states [b, seq, dims] of each row ('cls': token 0; 'mean': over the attention
 * mask) and L2-normalises, into a [b, dims] Float32Array.
 * @param {Float32Array} hidden @param {number[]} lengths @param {number} seq @param {number} dims @param {string} pooling
 */
function pool(hidden, lengths, seq, dims, pooling) {
  const out = new Float32Array(lengths.length * dims);
  const v = new Float64Array(dims);
  lengths.forEach((len, r) => {
    v.fill(0);
    const rows = pooling === 'cls' ? 1 : len;
    for (let c = 0; c < rows; c++) {
      const off = (r * seq + c) * dims;
      for (let d = 0; d < dims; d++) v[d] += hidden[off + d];
    }
    let norm = 0;
    for (let d = 0; d < dims; d++) norm += v[d] * v[d];
    norm = Math.max(Math.sqrt(norm), 1e-12);
    for (let d = 0; d < dims; d++) out[r * dims + d] = v[d] / norm;
  });
  return out;
}

/** @param {unknown} e */
const describe = (e) => String((e instanceof Error && e.stack) || e);

async function main() {
  /** @type {import("onnxruntime-node").InferenceSession} */
  let session;
  try {
    session = await ort.InferenceSession.create(workerData.onnxPath, workerData.sessionOptions);
  } catch (e) {
    port.postMessage({ ready: false, error: describe(e) });
    return;
  }
  // The token embeddings: the first output (last_hidden_state; MiniLM's export names it output_0).
  const output = session.outputNames[0];
  const needsTypes = session.inputNames.includes('token_type_ids');
  port.on('message', async (/** @type {any} */ m) => {
    try {
      // The call's batches one after another (onnxruntime runs on this thread), one reply for all.
      /** @type {Float32Array[]} */
      const parts = [];
      let dims = 0;
      for (const b of m.batches) {
        const rows = b.lengths.length;
        /** @type {Record<string, import("onnxruntime-node").Tensor>} */
        const feeds = {
          input_ids: new ort.Tensor('int64', b.ids, [rows, b.seq]),
          attention_mask: new ort.Tensor('int64', b.mask, [rows, b.seq]),
        };
        if (needsTypes) feeds.token_type_ids = new ort.Tensor('int64', new BigInt64Array(b.ids.length), [rows, b.seq]);
        const result = await session.run(feeds);
        const hidden = result[output];
        dims = Number(hidden.dims[2]);
        parts.push(pool(/** @type {Float32Array} */ (hidden.data), b.lengths, b.seq, dims, m.pooling));
      }
      const vectors = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
      let at = 0;
      for (const p of parts) {
        vectors.set(p, at);
        at += p.length;
      }
      port.postMessage({ id: m.id, vectors, dims }, [vectors.buffer]);
    } catch (e) {
      port.postMessage({ id: m.id, error: describe(e) });
    }
  });
  port.postMessage({ ready: true, inputs: session.inputNames, output });
}

void main();
