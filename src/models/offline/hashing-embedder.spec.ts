import { HashingEmbedder } from './hashing-embedder';

const dot = (a: number[], b: number[]): number => a.reduce((s, x, i) => s + x * b[i], 0);

describe('HashingEmbedder', () => {
  const e = new HashingEmbedder();

  it('names itself after what it is and has 384 dimensions by default', () => {
    expect(e.model).toBe('hashing-ngrams-384@1');
    expect(e.dimensions).toBe(384);
    expect(new HashingEmbedder({ dimensions: 64 }).model).toBe('hashing-ngrams-64@1');
  });

  it('is deterministic across calls and instances', async () => {
    const texts = ['I use vim for everything', 'Der Zug fährt um 8 Uhr', ''];
    const a = await e.embed(texts);
    const b = await new HashingEmbedder().embed(texts);
    expect(a).toEqual(b);
    expect(a[0].slice(0, 4)).toEqual((await e.embed(['I use vim for everything']))[0].slice(0, 4));
  });

  it('returns unit-length vectors of the right size, one per text, in order', async () => {
    const texts = ['short', 'a longer sentence about PostgreSQL and Neo4j', '!!!', '', '日本語のテキスト'];
    const vs = await e.embed(texts);
    expect(vs).toHaveLength(texts.length);
    for (const v of vs) {
      expect(v).toHaveLength(384);
      expect(Math.sqrt(dot(v, v))).toBeCloseTo(1, 10);
      expect(v.every(Number.isFinite)).toBe(true);
    }
    expect(await e.embed([])).toEqual([]);
  });

  it('puts texts that share words and word pieces closer than unrelated ones', async () => {
    const [vim, neovim, weather] = await e.embed(['I use vim for everything', 'I switched to neovim', 'The weather in Berlin is cold']);
    expect(dot(vim, neovim)).toBeGreaterThan(dot(vim, weather));
    const [pg1, pg2, cat] = await e.embed(['We store events in PostgreSQL', 'Our events live in a PostgreSQL database', 'My cat sleeps on the sofa']);
    expect(dot(pg1, pg2)).toBeGreaterThan(0.3);
    expect(dot(pg1, pg2)).toBeGreaterThan(dot(pg1, cat) + 0.2);
  });

  it('ignores case and accents', async () => {
    const [a, b] = await e.embed(['Café in MÜNCHEN', 'cafe in munchen']);
    expect(dot(a, b)).toBeCloseTo(1, 10);
  });
});
