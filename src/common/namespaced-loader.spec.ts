import { inNamespace, listIn, rowsIn } from './namespaced-loader';

interface Row {
  id: string;
  namespace: string;
}

const rows: Record<string, Row> = { a1: { id: 'a1', namespace: 'a' }, a2: { id: 'a2', namespace: 'a' }, b1: { id: 'b1', namespace: 'b' } };

/** A DataLoader's contract: null for a miss, an Error in place of a key whose batch failed. */
const loader = {
  load: async (id: string): Promise<Row | null> => rows[id] ?? null,
  loadMany: async (ids: readonly string[]): Promise<Array<Row | null | Error>> =>
    ids.map((id) => (id === 'boom' ? new Error('batch failed') : (rows[id] ?? null))),
};

describe('loaders seen from one namespace', () => {
  it('reads another namespace’s row as missing', async () => {
    const a = rowsIn(loader, 'a');
    expect(await a.load('a1')).toEqual(rows.a1);
    expect(await a.load('b1')).toBeNull();
    expect(await a.load('nope')).toBeNull();
  });

  it('keeps the rows of the namespace in key order, without misses, failures or other namespaces', async () => {
    expect(await rowsIn(loader, 'a').loadMany(['a2', 'b1', 'nope', 'boom', 'a1'])).toEqual([rows.a2, rows.a1]);
    expect(await rowsIn(loader, 'b').loadMany(['a2', 'b1'])).toEqual([rows.b1]);
  });

  it('maps or leaves out each row of a list', async () => {
    const lists = { load: async (_k: string) => [rows.a1, rows.b1, rows.a2] as Row[] };
    const keep = inNamespace('a');
    expect(await listIn(lists, (r) => (keep(r) ? r : null)).load('k')).toEqual([rows.a1, rows.a2]);
    expect(await listIn(lists, (r) => ({ ...r, id: r.id.toUpperCase() })).load('k')).toEqual([
      { id: 'A1', namespace: 'a' },
      { id: 'B1', namespace: 'b' },
      { id: 'A2', namespace: 'a' },
    ]);
  });

  it('takes no null, undefined or Error for a row', () => {
    const keep = inNamespace('a');
    expect([null, undefined, new Error('x'), rows.b1, rows.a1].filter(keep)).toEqual([rows.a1]);
  });
});
