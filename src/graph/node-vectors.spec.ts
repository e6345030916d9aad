import { NodeVectorCache, nodeVectorKey, scorable, similarity, StoredVector } from './node-vectors';

const vec = (n: number, x: number): number[] => Array.from({ length: n }, (_, i) => (i === 0 ? x : 0.5));

/** A reader that serves `stored` and counts what it was asked. */
function reader(stored: StoredVector[]) {
  const asked: string[][] = [];
  return {
    asked,
    read: async (ids: string[]) => {
      asked.push(ids);
      return stored.filter((s) => ids.includes(s.id));
    },
  };
}

describe('NodeVectorCache', () => {
  it('holds at most its byte budget, letting the least recently searched namespace go first', async () => {
    // 100 floats = 400 bytes + 128 per vector: two namespaces of two vectors fit in 2,200 bytes, three do not.
    const cache = new NodeVectorCache(2_200);
    const nodes = (ns: string) => [
      { id: `${ns}-1`, stamp: 1 },
      { id: `${ns}-2`, stamp: 1 },
    ];
    const stored = (ns: string) => nodes(ns).map((n) => ({ ...n, vector: vec(100, 1) }));
    for (const ns of ['a', 'b']) await cache.vectors(nodeVectorKey('Fact', 'm', ns), nodes(ns), 2, reader(stored(ns)).read);
    // a is searched again (most recent), then c arrives: b goes.
    const again = reader(stored('a'));
    await cache.vectors(nodeVectorKey('Fact', 'm', 'a'), nodes('a'), 2, again.read);
    expect(again.asked).toEqual([]);
    await cache.vectors(nodeVectorKey('Fact', 'm', 'c'), nodes('c'), 2, reader(stored('c')).read);
    expect(cache.heldBytes()).toBeLessThanOrEqual(2_200);
    const b = reader(stored('b'));
    await cache.vectors(nodeVectorKey('Fact', 'm', 'b'), nodes('b'), 2, b.read);
    expect(b.asked).toEqual([['b-1', 'b-2']]);
  });

  it('keeps nothing with a budget of 0: every listed vector is read each time', async () => {
    const cache = new NodeVectorCache(0);
    const r = reader([{ id: 'x', stamp: 1, vector: [1, 0] }]);
    await cache.vectors('k', [{ id: 'x', stamp: 1 }], 1, r.read);
    await cache.vectors('k', [{ id: 'x', stamp: 1 }], 1, r.read);
    expect(r.asked).toEqual([['x'], ['x']]);
    expect(cache.heldBytes()).toBe(0);
  });

  it('lets go of held vectors of nodes that no longer exist once it holds more than the namespace has', async () => {
    const cache = new NodeVectorCache(1 << 20);
    const all = ['p', 'q', 'r'].map((id) => ({ id, stamp: 1, vector: [1, 0] }));
    await cache.vectors('k', all, 3, reader(all).read);
    const full = cache.heldBytes();
    // r was erased: the namespace has 2 embedded nodes now; a new node s arrives.
    const now = [...all.slice(0, 2), { id: 's', stamp: 1, vector: [0, 1] }];
    await cache.vectors('k', now, 3, reader(now).read);
    expect(cache.heldBytes()).toBe(full);
    const r = reader(all);
    await cache.vectors('k', [{ id: 'r', stamp: 1 }], 3, r.read);
    expect(r.asked).toEqual([['r']]);
  });

  it("scores as Neo4j's vector.similarity.cosine: (1 + cosine) / 2, nothing for another length or a zero vector", () => {
    const q = Float64Array.from([3, 4]);
    expect(similarity(scorable([3, 4]), q, 5)).toBeCloseTo(1, 12);
    expect(similarity(scorable([-3, -4]), q, 5)).toBeCloseTo(0, 12);
    expect(similarity(scorable([4, -3]), q, 5)).toBeCloseTo(0.5, 12);
    expect(similarity(scorable([1, 2, 3]), q, 5)).toBeNull();
    expect(similarity(scorable([0, 0]), q, 5)).toBeNull();
  });
});
