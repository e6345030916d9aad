import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadConfig } from "../../common/config";
import { ONNX_EMBEDDING_MODELS } from "./embedding-models";
import { HashingEmbedder } from "./hashing-embedder";
import { DEFAULT_OFFLINE_EMBEDDER, loadOfflineEmbedder, OFFLINE_EMBEDDERS } from "./offline-embedder";
import { OnnxEmbedder } from "./onnx-embedder";

const cacheDir = process.env.CACHE_DIR ?? path.resolve(__dirname, "../../../.cache");

describe("loadOfflineEmbedder", () => {
  it("gives the hashing embedder when asked to", async () => {
    const e = await loadOfflineEmbedder({ cacheDir, prefer: "hashing" });
    expect(e).toBeInstanceOf(HashingEmbedder);
    expect(e.model).toBe("hashing-ngrams-384@1");
  });

  it("falls back to the hashing embedder, saying why, when the model cannot be fetched", async () => {
    // A cache folder below a regular file cannot be created.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "offline-embedder-"));
    const blocker = path.join(dir, "not-a-folder");
    fs.writeFileSync(blocker, "");
    const logs: string[] = [];
    try {
      const e = await loadOfflineEmbedder({ cacheDir: path.join(blocker, "cache"), prefer: "e5-small", log: (m) => logs.push(m) });
      expect(e).toBeInstanceOf(HashingEmbedder);
      expect(e.dimensions).toBe(384);
      expect(logs.join("\n")).toMatch(/e5-small-v2 could not load, falling back to hashing-ngrams-384@1 .*ENOTDIR/s);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("gives the configured default model when nothing is preferred", async () => {
    expect(loadConfig({}).models.offlineEmbedder).toBe(DEFAULT_OFFLINE_EMBEDDER);
    if (DEFAULT_OFFLINE_EMBEDDER === "hashing") throw new Error("the default offline embedder is a model");
    const want = ONNX_EMBEDDING_MODELS[OFFLINE_EMBEDDERS[DEFAULT_OFFLINE_EMBEDDER]].model;
    const e = await loadOfflineEmbedder({ cacheDir });
    try {
      expect(e).toBeInstanceOf(OnnxEmbedder);
      expect(e.model).toBe(want);
    } finally {
      if (e instanceof OnnxEmbedder) await e.close();
    }
  }, 300_000);
});
