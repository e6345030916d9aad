import { randomUUID } from 'node:crypto';
import { Driver, ManagedTransaction } from 'neo4j-driver';
import { deleteErasedNodes } from '../../src/graph/cypher/erased-nodes';
import { EventNodeRow, mergeEventNodes } from '../../src/graph/cypher/event-nodes';
import { applyNeo4jSchema, createNeo4jDriver } from '../../src/platform/neo4j/neo4j-client';
import { testStores, uniqueNamespace } from '../support/stores';

/**
 * The turn before each event, as the event keyword channel indexes it (`context`): the projector's
 * own Cypher against the real Neo4j, with the neighbour ids Postgres would give at each step
 * (graph-source.repository.ts), so turns projected out of order, a turn landing between two
 * others, erasures and another namespace's node are each covered.
 */
describe('event context in the projection (the turn before, for the keyword channel)', () => {
  let driver: Driver;
  const ns = uniqueNamespace('context');
  const ids = { a: randomUUID(), b: randomUUID(), c: randomUUID(), d: randomUUID() };
  const text = { a: 'What did you bring back from Kyoto?', b: 'Mostly green tea.', c: 'And a paper lantern.', d: 'See you at the lantern festival.' };

  const row = (key: keyof typeof ids, previous: keyof typeof ids | null, next: keyof typeof ids | null, namespace = ns): EventNodeRow => ({
    id: ids[key],
    namespace,
    source: 'test',
    kind: 'MESSAGE',
    conversationId: 'trip',
    sessionId: null,
    sequenceNum: ['a', 'b', 'c', 'd'].indexOf(key) + 1,
    role: 'USER',
    actor: null,
    content: text[key],
    occurredAt: '2026-04-02T18:00:00.000Z',
    ingestedAt: '2026-04-02T18:00:01.000Z',
    embedding: null,
    embeddingModel: null,
    previousEventId: previous ? ids[previous] : null,
    nextEventId: next ? ids[next] : null,
  });
  const write = async (work: (tx: ManagedTransaction) => Promise<void>): Promise<void> => {
    const session = driver.session();
    try {
      await session.executeWrite(work);
    } finally {
      await session.close();
    }
  };
  const contexts = async (): Promise<Record<string, string | null>> => {
    const res = await driver.executeQuery(`MATCH (e:Event) WHERE e.namespace = $ns RETURN e.content AS content, e.context AS context`, { ns });
    return Object.fromEntries(res.records.map((r) => [r.get('content') as string, (r.get('context') as string | null) ?? null]));
  };

  beforeAll(async () => {
    driver = createNeo4jDriver(testStores().neo4j);
    await applyNeo4jSchema(driver);
  });
  afterAll(async () => {
    await driver.executeQuery(`MATCH (e:Event) WHERE e.namespace IN [$ns, $other] DETACH DELETE e`, { ns, other: `${ns}-other` });
    await driver?.close();
  });

  it('gives each turn the one before it, whichever arrives first, and a turn landing between two others', async () => {
    // c arrives first, then a (the first turn), then d: Postgres sees a, c, d; b is not there yet.
    await write((tx) => mergeEventNodes(tx, [row('c', null, null)]));
    await write((tx) => mergeEventNodes(tx, [row('a', null, 'c'), row('d', 'c', null)]));
    expect(await contexts()).toEqual({ [text.a]: null, [text.c]: text.a, [text.d]: text.c });
    // b lands between a and c: c now follows b.
    await write((tx) => mergeEventNodes(tx, [row('b', 'a', 'c')]));
    expect(await contexts()).toEqual({ [text.a]: null, [text.b]: text.a, [text.c]: text.b, [text.d]: text.c });
  });

  it('gives a turn its context when the turn before it is projected later by a projector that read Postgres before the turn existed', async () => {
    // Two workers drain the outbox: one reads turn x (no next turn in Bronze yet), the other
    // projects the next turn y first (x has no node yet), then the first writes x.
    const race = `${ns}-race`;
    const x = { ...row('a', null, null, race), id: randomUUID() };
    const y = { ...row('b', null, null, race), id: randomUUID(), previousEventId: x.id };
    await write((tx) => mergeEventNodes(tx, [y]));
    await write((tx) => mergeEventNodes(tx, [x]));
    const res = await driver.executeQuery(`MATCH (e:Event {id: $id}) RETURN e.context AS context`, { id: y.id });
    expect(res.records[0]?.get('context')).toBe(text.a);
    await driver.executeQuery(`MATCH (e:Event) WHERE e.namespace = $race DETACH DELETE e`, { race });
  });

  it('follows a re-projected turn (an overlay changes what readers see)', async () => {
    await write((tx) => mergeEventNodes(tx, [{ ...row('b', 'a', 'c'), content: 'Mostly [redacted].' }]));
    expect((await contexts())[text.c]).toBe('Mostly [redacted].');
    await write((tx) => mergeEventNodes(tx, [row('b', 'a', 'c')]));
    expect((await contexts())[text.c]).toBe(text.b);
  });

  it("keeps no vector of a turn's earlier text when its changed text (a redaction) comes without one", async () => {
    const vector = Array.from({ length: 8 }, (_, i) => (i + 1) / 8);
    const vectorOf = async () =>
      (await driver.executeQuery(`MATCH (e:Event {id: $id}) RETURN e.embedding AS v, e.embeddingModel AS m`, { id: ids.d })).records.map((r) => [
        r.get('v') === null ? null : 'vector',
        r.get('m'),
      ]);
    await write((tx) => mergeEventNodes(tx, [{ ...row('d', 'c', null), embedding: vector, embeddingModel: 'm@1' }]));
    expect(await vectorOf()).toEqual([['vector', 'm@1']]);
    // The same text again without a vector (an embedder down at a re-projection): the vector stays.
    await write((tx) => mergeEventNodes(tx, [row('d', 'c', null)]));
    expect(await vectorOf()).toEqual([['vector', 'm@1']]);
    // Redacted, and the redacted text could not be embedded: the old vector goes.
    await write((tx) => mergeEventNodes(tx, [{ ...row('d', 'c', null), content: 'See you at the [redacted].' }]));
    expect(await vectorOf()).toEqual([[null, null]]);
    await write((tx) => mergeEventNodes(tx, [row('d', 'c', null)]));
  });

  it('never takes the text of another namespace, whatever id it is given', async () => {
    await write((tx) => mergeEventNodes(tx, [{ ...row('d', null, null, `${ns}-other`), id: randomUUID(), previousEventId: ids.c }]));
    const res = await driver.executeQuery(`MATCH (e:Event) WHERE e.namespace = $other RETURN e.context AS context`, { other: `${ns}-other` });
    expect(res.records.map((r) => r.get('context') as unknown)).toEqual([null]);
  });

  it('relinks the next turn past an erased one, also when two adjacent turns are erased together, and keeps none of their text', async () => {
    await write((tx) => deleteErasedNodes(tx, 'Event', [ids.b]));
    expect(await contexts()).toEqual({ [text.a]: null, [text.c]: text.a, [text.d]: text.c });
    // c before a in the list: the later statement must still fix d, which c's relinking pointed at a.
    await write((tx) => deleteErasedNodes(tx, 'Event', [ids.c, ids.a]));
    expect(await contexts()).toEqual({ [text.d]: null });
    const left = await driver.executeQuery(`MATCH (e:Event) WHERE e.namespace = $ns RETURN e.contextEventId AS before`, { ns });
    expect(left.records.map((r) => r.get('before') as unknown)).toEqual([null]);
  });

  it('gives a turn its context when it and the turn before are written at once, in two transactions (two projectors)', async () => {
    const pair = uniqueNamespace('context-pair');
    const first = { ...row('a', null, 'b', pair), id: randomUUID() };
    const second = { ...row('b', 'a', null, pair), id: randomUUID(), previousEventId: first.id };
    const s1 = driver.session();
    const s2 = driver.session();
    const t1 = s1.beginTransaction();
    const t2 = s2.beginTransaction();
    try {
      // Each projector read Postgres before the other wrote: the first does not know its successor's node yet.
      await mergeEventNodes(t1, [{ ...first, nextEventId: null }]);
      const secondWritten = mergeEventNodes(t2, [second]);
      await new Promise((r) => setTimeout(r, 500));
      await t1.commit();
      await secondWritten;
      await t2.commit();
    } finally {
      await s1.close();
      await s2.close();
    }
    const res = await driver.executeQuery(`MATCH (e:Event {id: $id}) RETURN e.context AS context`, { id: second.id });
    expect(res.records[0]?.get('context')).toBe(text.a);
    await driver.executeQuery(`MATCH (e:Event) WHERE e.namespace = $ns DETACH DELETE e`, { ns: pair });
  });
});
