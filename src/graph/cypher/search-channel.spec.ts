import { NodeVectorCache } from '../node-vectors';
import { Listing, vectorChannel, VectorChannelShape, vectorListing, vectorSearch } from './search-channel';

const shape: VectorChannelShape = {
  label: 'Event',
  node: 'e',
  index: 'event_embedding',
  filter: 'e.namespace = $ns',
  returns: 'RETURN e.id AS id, score ORDER BY score DESC, id LIMIT $k',
  payload: 'supersededBy: [[n.id]]',
};

/** A runner that records what it is asked and answers with `rows`. */
function runner(rows: Array<Record<string, unknown>>) {
  const calls: Array<{ text: string; params: Record<string, unknown> | undefined }> = [];
  const tx = {
    run: async (text: string, params?: Record<string, unknown>) => {
      calls.push({ text, params });
      return { records: rows.map((r) => ({ has: (k: string) => k in r, get: (k: string) => r[k] })) };
    },
  } as never;
  return { tx, calls };
}

describe('vectorChannel', () => {
  it('refuses a label, variable or index name that is not an identifier', () => {
    expect(() => vectorChannel({ ...shape, label: 'Event) DETACH DELETE (x' as 'Event' })).toThrow(/not a valid Cypher identifier/);
    expect(() => vectorChannel({ ...shape, index: "event_embedding', 1, []) YIELD node CALL db.x('" })).toThrow(/not a valid Cypher identifier/);
    expect(() => vectorChannel({ ...shape, node: 'n' })).toThrow(/taken/);
  });

  it('scopes every statement that reads a namespace to $ns', () => {
    const { statements } = vectorChannel(shape);
    for (const text of [statements.exact, statements.listing, statements.vectors, statements.hits, statements.index, statements.countEmbedded])
      expect(text).toContain('namespace = $ns');
    expect(statements.index).toContain(`db.index.vector.queryNodes('event_embedding', $candidates, $vector) YIELD node AS e, score`);
  });

  it('passes the scope, model and vector to each statement', async () => {
    const { tx, calls } = runner([{ id: 'a', score: 0.9 }]);
    const search = vectorSearch(vectorChannel(shape), { ns: 'ns1', asOf: null }, 'm', [1, 0]);
    expect(await search.exact(tx, 5)).toEqual([{ id: 'a', score: 0.9 }]);
    await search.index(tx, 100, 5);
    expect(calls.map((c) => Object.keys(c.params ?? {}).sort())).toEqual([
      ['asOf', 'k', 'model', 'ns', 'vector'],
      ['asOf', 'candidates', 'k', 'model', 'ns', 'vector'],
    ]);
  });

  it('lists the filtered nodes with their stamps only when the namespace is small enough, and reads no vector', async () => {
    const channel = vectorChannel(shape);
    expect(channel.statements.listing).not.toMatch(/embedding\b|cosine/);
    const listing = vectorListing(channel, { ns: 'ns1' }, 'm');
    const small = runner([
      {
        embedded: 2,
        listed: [
          { id: 'a', stamp: 0.5 },
          { id: 'b', stamp: null },
        ],
      },
    ]);
    expect(await listing.list(small.tx, 2)).toEqual({
      embedded: 2,
      nodes: [
        { id: 'a', stamp: 0.5 },
        { id: 'b', stamp: null },
      ],
    });
    expect(small.calls[0]?.params).toMatchObject({ ns: 'ns1', model: 'm' });
    const large = runner([{ embedded: 3, listed: [] }]);
    expect(await listing.list(large.tx, 2)).toEqual({ embedded: 3, nodes: null });
  });

  /** A runner that answers the vectors statement with `vectors` and the hits statement with a payload per asked id (`carried`). */
  function stores(vectors: Array<Record<string, unknown>>, carried: Record<string, Record<string, unknown>> = {}) {
    const calls: Array<{ text: string; params: Record<string, unknown> | undefined }> = [];
    const rows = (rs: Array<Record<string, unknown>>) => ({ records: rs.map((r) => ({ has: (k: string) => k in r, get: (k: string) => r[k] })) });
    const tx = {
      run: async (text: string, params?: Record<string, unknown>) => {
        calls.push({ text, params });
        if (text.includes('AS hit')) return rows(((params?.ids ?? []) as string[]).filter((id) => id !== 'gone').map((id) => ({ id, hit: carried[id] ?? {} })));
        return rows(vectors.filter((v) => ((params?.ids ?? []) as string[]).includes(v.id as string)));
      },
    } as never;
    return { tx, calls };
  }

  it('ranks the listed nodes by cosine in process, as Neo4j scores them ((1 + cos) / 2, then id), with every score when asked', async () => {
    const listing = vectorListing(vectorChannel({ ...shape, allScores: true }), { ns: 'ns1' }, 'm');
    const listed: Listing = {
      embedded: 4,
      nodes: [
        { id: 'c', stamp: 1 },
        { id: 'b', stamp: 2 },
        { id: 'a', stamp: 3 },
        { id: 'short', stamp: 4 },
      ],
    };
    const stored = stores(
      [
        { id: 'a', stamp: 3, embedding: [1, 0] },
        { id: 'b', stamp: 2, embedding: [0, 2] },
        { id: 'c', stamp: 1, embedding: [0, 1] },
        { id: 'short', stamp: 4, embedding: [1] },
      ],
      { b: { supersededBy: [['z']] } },
    );
    const ranked = await listing.rank(stored.tx, listed, new NodeVectorCache(1 << 20), [0, 1], 2);
    // b and c tie at cosine 1 (b's vector is longer): the id decides, as ORDER BY score DESC, id does; a is orthogonal (0.5).
    expect(ranked).toEqual({
      embedded: 4,
      hits: [
        { id: 'b', score: 1, supersededBy: ['z'] },
        { id: 'c', score: 1 },
      ],
      scores: { b: 1, c: 1, a: 0.5 },
    });
    // One statement read the four vectors, one the payloads of the first k; a vector of another length is not scored.
    expect(stored.calls.map((c) => c.params?.ids)).toEqual([
      ['c', 'b', 'a', 'short'],
      ['b', 'c'],
    ]);
    expect(stored.calls[0]?.params).toMatchObject({ ns: 'ns1', model: 'm' });
  });

  it('drops a hit whose node went away between the listing and its payload', async () => {
    const listing = vectorListing(vectorChannel(shape), { ns: 'ns1' }, 'm');
    const stored = stores([
      { id: 'gone', stamp: 1, embedding: [1, 0] },
      { id: 'kept', stamp: 2, embedding: [1, 1] },
    ]);
    const listed: Listing = {
      embedded: 2,
      nodes: [
        { id: 'gone', stamp: 1 },
        { id: 'kept', stamp: 2 },
      ],
    };
    expect((await listing.rank(stored.tx, listed, new NodeVectorCache(0), [1, 0], 5)).hits?.map((h) => h.id)).toEqual(['kept']);
  });

  it('reuses a held vector only while its stamp is the listed one, and reads a node without a stamp every time', async () => {
    const listing = vectorListing(vectorChannel(shape), { ns: 'ns1' }, 'm');
    const cache = new NodeVectorCache(1 << 20);
    const listed = (aStamp: number): Listing => ({
      embedded: 2,
      nodes: [
        { id: 'a', stamp: aStamp },
        { id: 'b', stamp: null },
      ],
    });
    const vectorReads = (calls: Array<{ text: string; params: Record<string, unknown> | undefined }>) =>
      calls.filter((c) => !c.text.includes('AS hit')).map((c) => c.params?.ids);
    const first = stores([
      { id: 'a', stamp: 1, embedding: [1, 0] },
      { id: 'b', stamp: null, embedding: [0, 1] },
    ]);
    expect((await listing.rank(first.tx, listed(1), cache, [1, 0], 5)).hits?.map((h) => h.id)).toEqual(['a', 'b']);
    const again = stores([{ id: 'b', stamp: null, embedding: [0, 1] }]);
    await listing.rank(again.tx, listed(1), cache, [1, 0], 5);
    expect(vectorReads(again.calls)).toEqual([['b']]);
    // a was written again (re-embedded, or its text redacted): its new vector is read and ranks it.
    const rewritten = stores([
      { id: 'a', stamp: 7, embedding: [-1, 0] },
      { id: 'b', stamp: null, embedding: [0, 1] },
    ]);
    const after = await listing.rank(rewritten.tx, listed(7), cache, [1, 0], 5);
    expect(vectorReads(rewritten.calls)).toEqual([['a', 'b']]);
    expect(after.hits).toEqual([
      { id: 'b', score: 0.5 },
      { id: 'a', score: 0 },
    ]);
    expect(cache.counted()).toEqual({ reused: 1, read: 5 });
  });

  it('counts and ranks in one call for callers that have the vector already (tests, benches)', async () => {
    const search = vectorSearch(vectorChannel(shape), { ns: 'ns1' }, 'm', [1, 0]);
    const large = runner([{ embedded: 9, listed: [] }]);
    expect(await search.countedExact(large.tx, 1, 5, new NodeVectorCache(0))).toEqual({ embedded: 9, hits: null });
    expect(large.calls).toHaveLength(1);
  });
});
