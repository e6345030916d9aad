import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../common/config';
import { ONNX_EMBEDDING_MODELS } from './embedding-models';
import { HashingEmbedder } from './hashing-embedder';
import { DEFAULT_OFFLINE_EMBEDDER, judgeOptionsForEmbedder, loadOfflineEmbedder, OFFLINE_EMBEDDERS, rescaleSimilarity } from './offline-embedder';
import { OnnxEmbedder } from './onnx-embedder';
import { RuleJudge } from './rule-judge';

const cacheDir = process.env.CACHE_DIR ?? path.resolve(__dirname, '../../../.cache');

describe('loadOfflineEmbedder', () => {
  it('gives the hashing embedder when asked to', async () => {
    const e = await loadOfflineEmbedder({ cacheDir, prefer: 'hashing' });
    expect(e).toBeInstanceOf(HashingEmbedder);
    expect(e.model).toBe('hashing-ngrams-384@1');
  });

  it('falls back to the hashing embedder, saying why, when the model cannot be fetched', async () => {
    // A cache folder below a regular file cannot be created.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offline-embedder-'));
    const blocker = path.join(dir, 'not-a-folder');
    fs.writeFileSync(blocker, '');
    const logs: string[] = [];
    try {
      const e = await loadOfflineEmbedder({ cacheDir: path.join(blocker, 'cache'), prefer: 'e5-small', log: (m) => logs.push(m) });
      expect(e).toBeInstanceOf(HashingEmbedder);
      expect(e.dimensions).toBe(384);
      expect(logs.join('\n')).toMatch(/e5-small-v2-q8 could not load, falling back to hashing-ngrams-384@1 .*ENOTDIR/s);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('gives the configured default model when nothing is preferred', async () => {
    expect(loadConfig({}).models.offlineEmbedder).toBe(DEFAULT_OFFLINE_EMBEDDER);
    if (DEFAULT_OFFLINE_EMBEDDER === 'hashing') throw new Error('the default offline embedder is a model');
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

describe('judgeOptionsForEmbedder', () => {
  it("keeps the rule judge's defaults on MiniLM's scale and for non-ONNX embedders", () => {
    expect(rescaleSimilarity(0.8, ONNX_EMBEDDING_MODELS['all-MiniLM-L6-v2'].unrelatedCosine)).toBeCloseTo(0.8, 10);
    expect(rescaleSimilarity(1, 0.844)).toBeCloseTo(1, 10);
    expect(judgeOptionsForEmbedder(new HashingEmbedder())).toEqual({});
  });

  it("keeps e5's unrelated pairs from being judged the same statement", async () => {
    const e = await loadOfflineEmbedder({ cacheDir, prefer: 'e5-small' });
    try {
      const options = judgeOptionsForEmbedder(e);
      // e5-small-v2-q8: unrelated LoCoMo turns average 0.84, their 95th percentile is 0.90.
      expect(options.updateSimilarity).toBeGreaterThan(0.9);
      expect(options.skipSimilarity).toBeGreaterThan(options.updateSimilarity!);
      // Two facts about one subject that e5 scores 0.93 (different-object pairs such as "uses Vim" /
      // "uses Docker" score 0.86-0.89 on it): on MiniLM's bars that is "near-identical" and the new
      // fact would be dropped.
      const fact = {
        statement: 'Caroline likes hiking',
        factType: 'preference',
        subjectName: 'Caroline',
        predicate: null,
        objectValue: null,
        isNegation: false,
        validFrom: new Date('2025-03-24T10:00:00Z'),
        replacesValue: null,
      };
      const candidate = {
        id: 'old',
        statement: 'Caroline likes painting',
        factType: 'preference',
        subjectName: 'Caroline',
        predicate: null,
        objectValue: null,
        isNegation: false,
        validFrom: new Date('2025-03-10T09:00:00Z'),
        similarity: 0.93,
      };
      // Since issue 23 a SKIP also needs the same content words, so neither bar drops it.
      expect(new RuleJudge().decideOne({ fact, candidates: [candidate] }).action).toBe('ADD');
      expect(new RuleJudge(options).decideOne({ fact, candidates: [candidate] })).toMatchObject({ action: 'ADD', targetId: null });
    } finally {
      if (e instanceof OnnxEmbedder) await e.close();
    }
  }, 300_000);
});
