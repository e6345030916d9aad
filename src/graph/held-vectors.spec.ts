import { HeldCandidate, HeldVectors, StoredVector, textHash } from './held-vectors';

/** A store the held vectors read from, counting what they ask for. */
function store(vectors: Record<string, { text: string; vector: number[] }>) {
  const asked: string[][] = [];
  const read = async (ids: string[]): Promise<StoredVector[]> => {
    asked.push(ids);
    return ids.flatMap((id) => (vectors[id] ? [{ id, key: textHash(vectors[id].text), vector: vectors[id].vector }] : []));
  };
  return { asked, read, vectors };
}
const candidates = (s: ReturnType<typeof store>, ids: string[]): HeldCandidate[] => ids.map((id) => ({ id, key: textHash(s.vectors[id]?.text ?? '') }));

describe('HeldVectors', () => {
  it("ranks by Neo4j's cosine, (1 + cos) / 2, ties by id, and reads each vector once while its text stays", async () => {
    const s = store({
      b: { text: 'b', vector: [1, 0] },
      a: { text: 'a', vector: [2, 0] },
      c: { text: 'c', vector: [0, 1] },
      d: { text: 'd', vector: [-1, 0] },
      e: { text: 'e', vector: [1, 0, 0] },
    });
    const held = new HeldVectors(1 << 20);
    const first = await held.topK('ns', candidates(s, ['b', 'a', 'c', 'd', 'e']), [3, 0], 3, s.read);
    expect(first.hits.map((h) => [h.id, h.score])).toEqual([
      ['a', 1],
      ['b', 1],
      ['c', 0.5],
    ]);
    // A vector of another length is not scored (as the Cypher filter on embeddingDims).
    expect(first.scores).toEqual({ a: 1, b: 1, c: 0.5, d: 0 });
    expect(s.asked).toEqual([['b', 'a', 'c', 'd', 'e']]);
    await held.topK('ns', candidates(s, ['b', 'a', 'c']), [0, 1], 3, s.read);
    expect(s.asked).toHaveLength(1);
  });

  it('reads a vector again when its text changed, and never scores the old one against the new text', async () => {
    const s = store({ a: { text: 'old words', vector: [1, 0] }, b: { text: 'b', vector: [0, 1] } });
    const held = new HeldVectors(1 << 20);
    await held.topK('ns', candidates(s, ['a', 'b']), [1, 0], 2, s.read);
    s.vectors.a = { text: '[redacted]', vector: [0, 1] };
    const after = await held.topK('ns', candidates(s, ['a', 'b']), [1, 0], 2, s.read);
    expect(s.asked).toEqual([['a', 'b'], ['a']]);
    expect(after.scores).toEqual({ a: 0.5, b: 0.5 });
  });

  it("drops what an unfiltered search's candidates no longer name, and whole namespaces least recently searched first past its bound", async () => {
    const vectors = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`f${i}`, { text: `t${i}`, vector: [1, i] }]));
    const s = store(vectors);
    const all = Object.keys(vectors);
    const held = new HeldVectors(1 << 20);
    await held.topK('ns', candidates(s, all), [1, 0], 5, s.read);
    const full = held.bytes;
    // A filtered search (a type, a time) names fewer candidates and keeps the rest held.
    await held.topK('ns', candidates(s, all.slice(0, 10)), [1, 0], 5, s.read, false);
    expect(held.bytes).toBe(full);
    // 90 of 100 erased: the space keeps only the 10 still named.
    await held.topK('ns', candidates(s, all.slice(0, 10)), [1, 0], 5, s.read);
    expect(held.bytes).toBeLessThan(full / 5);

    const bounded = new HeldVectors(full * 2.5);
    for (const space of ['one', 'two', 'three']) await bounded.topK(space, candidates(s, all), [1, 0], 5, s.read);
    expect(bounded.bytes).toBeLessThanOrEqual(full * 2.5);
    s.asked.length = 0;
    await bounded.topK('three', candidates(s, all), [1, 0], 5, s.read);
    await bounded.topK('two', candidates(s, all), [1, 0], 5, s.read);
    expect(s.asked).toEqual([]);
    await bounded.topK('one', candidates(s, all), [1, 0], 5, s.read);
    expect(s.asked).toEqual([all]);
  });
});
