import { textHash } from '../held-vectors';
import { vectorChannel, VectorChannelShape, vectorSearch } from './search-channel';

const shape: VectorChannelShape = {
  label: 'Event',
  node: 'e',
  index: 'event_embedding',
  filter: 'e.namespace = $ns',
  returns: 'RETURN e.id AS id, score ORDER BY score DESC, id LIMIT $k',
  text: 'content',
  extra: { name: 'supersededBy', expression: '[]' },
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
    for (const text of [statements.exact, statements.countedExact, statements.index, statements.countEmbedded, statements.heldScan, statements.heldVectors])
      expect(text).toContain('namespace = $ns');
    // The held-vectors scan reads no vector and needs none: it is sent before the query is embedded.
    expect(statements.heldScan).not.toMatch(/embedding\b|\$vector/);
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

  it('returns the counted hits only when the namespace is small enough', async () => {
    const search = vectorSearch(vectorChannel(shape), { ns: 'ns1' }, 'm', [1, 0]);
    const small = runner([{ embedded: 2, hits: [{ id: 'a', score: 0.5 }] }]);
    expect(await search.countedExact(small.tx, 5, 2)).toEqual({ embedded: 2, hits: [{ id: 'a', score: 0.5 }] });
    const large = runner([{ embedded: 3, hits: [] }]);
    expect(await search.countedExact(large.tx, 5, 2)).toEqual({ embedded: 3, hits: null });
  });

  it('with allScores, returns every scored id with its cosine beside the hits, the hits in the same statement', async () => {
    const channel = vectorChannel({ ...shape, allScores: true });
    expect(channel.statements.countedExact).toContain('collect(n.id) AS scoredIds');
    const search = vectorSearch(channel, { ns: 'ns1' }, 'm', [1, 0]);
    const small = runner([{ embedded: 3, hits: [{ id: 'a', score: 0.5 }], scoredIds: ['a', 'b'], scores: [0.5, 0.25] }]);
    expect(await search.countedExact(small.tx, 1, 5)).toEqual({ embedded: 3, hits: [{ id: 'a', score: 0.5 }], scores: { a: 0.5, b: 0.25 } });
    expect(small.calls).toHaveLength(1);
    const large = runner([{ embedded: 9, hits: [], scoredIds: [], scores: [] }]);
    expect(await search.countedExact(large.tx, 1, 5)).toEqual({ embedded: 9, hits: null });
    expect(vectorChannel(shape).statements.countedExact).not.toContain('scoredIds');
  });
});

describe('the held-vectors statements', () => {
  it('return the candidates as parallel lists, only when the namespace is small enough, with what a hit carries', async () => {
    const search = vectorSearch(vectorChannel(shape), { ns: 'ns1', asOf: null }, 'm', [1, 0]);
    const small = runner([{ embedded: 2, ids: ['a', 'b'], texts: ['one', null], extras: [[['f1'], ['f2']], []] }]);
    expect(await search.heldScan(small.tx, 2)).toEqual({
      embedded: 2,
      candidates: [
        { id: 'a', key: textHash('one'), supersededBy: ['f1', 'f2'] },
        { id: 'b', key: textHash(''), supersededBy: [] },
      ],
    });
    expect(Object.keys(small.calls[0]?.params ?? {}).sort()).toEqual(['asOf', 'exactMax', 'model', 'ns']);
    const large = runner([{ embedded: 3, ids: [], texts: [], extras: [] }]);
    expect(await search.heldScan(large.tx, 2)).toEqual({ embedded: 3, candidates: null });
    const vectors = runner([{ id: 'a', text: 'one', vector: [0.5, 0.5] }]);
    expect(await search.heldVectors(vectors.tx, ['a'])).toEqual([{ id: 'a', key: textHash('one'), vector: [0.5, 0.5] }]);
    expect(vectors.calls[0]?.params).toEqual({ ns: 'ns1', model: 'm', ids: ['a'] });
  });
});
