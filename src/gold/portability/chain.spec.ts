import { eventChecksum } from '../../bronze/checksum';
import { parseJsonExact } from '../../common/exact-json';
import { ChainLink, ChainRecord, ChainVerifier, EventItem, GENESIS, itemHashOf, itemIdOf, JudgeDecisionItem, linkHashOf, OverlayItem, partsOf } from './chain';
import { derivedUuid } from './import-file';
import { CheckpointIndex, parseMultirange, RetentionCheckpoint } from './checkpoints';

const event = (over: Partial<EventItem> = {}): EventItem => {
  const base: EventItem = {
    id: '11111111-1111-4111-8111-111111111111',
    namespace: 'ns',
    source: 'chat',
    sourceEventId: 'm1',
    provenanceRoot: null,
    kind: 'message',
    conversationId: 'c1',
    sessionId: null,
    sequenceNum: 1,
    role: 'user',
    actor: null,
    content: 'I live in Berlin',
    rawPayloadText: '{"n":9007199254740993,"b":1.5}',
    toolCallId: null,
    checksum: '',
    occurredAt: '2026-01-02T09:00:00.000000Z',
    ingestedAt: '2026-01-02T09:00:01.123456Z',
    destroyedAt: null,
    ...over,
  };
  return { ...base, checksum: over.checksum ?? checksumOf(base) };
};

function checksumOf(e: EventItem, occurredAt: string | null = '2026-01-02T09:00:00.000Z'): string {
  return eventChecksum({
    kind: e.kind,
    content: e.content,
    rawPayload: e.rawPayloadText === null ? null : parseJsonExact(e.rawPayloadText),
    provenanceRoot: e.provenanceRoot,
    conversationId: e.conversationId,
    sessionId: e.sessionId,
    sequenceNum: e.sequenceNum,
    role: e.role,
    actor: e.actor,
    occurredAt,
  });
}

const overlay = (over: Partial<OverlayItem> = {}): OverlayItem => ({
  id: '22222222-2222-4222-8222-222222222222',
  version: 1,
  namespace: 'ns',
  factId: '33333333-3333-4333-8333-333333333333',
  eventId: null,
  kind: 'EDIT',
  exact: 'Berlin',
  prefix: 'I live in ',
  suffix: '',
  spanStart: 10,
  spanEnd: 16,
  textHash: 'abc',
  body: 'Paris',
  reason: 'moved',
  author: 'ann',
  authorId: '44444444-4444-4444-8444-444444444444',
  changedBy: 'ann',
  status: 'ANCHORED',
  anchorConfidence: null,
  needsReview: false,
  jobId: null,
  createdAt: '2026-01-02T09:00:00.000001Z',
  versionAt: '2026-01-02T09:00:00.000001Z',
  ...over,
});

const judge = (over: Partial<JudgeDecisionItem> = {}): JudgeDecisionItem => ({
  id: '55555555-5555-4555-8555-555555555555',
  namespace: 'ns',
  derivationRunId: '66666666-6666-4666-8666-666666666666',
  factId: 'f-new',
  action: 'ADD',
  targetFactId: null,
  judgeModel: 'rules',
  decidedAt: '2026-01-02T09:00:02.000000Z',
  statement: 'The user lives in Berlin',
  reason: 'new',
  candidates: [
    { id: 'f-old', statement: 'The user lives in Bonn', score: 0.5 },
    { id: 'f-other', statement: 'The user likes tea', score: 0.2 },
  ],
  ...over,
});

/** Seals records as the sealer does. */
function seal(records: ChainRecord[]): ChainLink[] {
  let prev = GENESIS;
  return records.map((r, i) => {
    const parts = partsOf(r);
    const itemHash = itemHashOf(r, parts);
    const hash = linkHashOf(i + 1, prev, itemHash);
    const link: ChainLink = { namespace: 'ns', seq: i + 1, kind: r.kind, itemId: itemIdOf(r), itemHash, parts, prevHash: prev, hash };
    prev = hash;
    return link;
  });
}

function verify(links: ChainLink[], records: Array<ChainRecord | null>, ctx: Array<Record<string, unknown>> = [], checkpoints: RetentionCheckpoint[] = []) {
  const v = new ChainVerifier(new CheckpointIndex(checkpoints));
  links.forEach((l, i) => v.feed(l, records[i] ?? null, ctx[i] ?? {}));
  return v.result();
}

describe('the hash chain', () => {
  it('an untouched chain verifies and its head is the last link hash', () => {
    const records: ChainRecord[] = [
      { kind: 'event', item: event() },
      { kind: 'overlay', item: overlay() },
      { kind: 'judge_decision', item: judge() },
    ];
    const links = seal(records);
    expect(verify(links, records)).toEqual({ ok: true, links: 3, head: links[2]?.hash, broken: null, retained: 0, checkpoints: 0 });
  });

  it('an event whose occurredAt the server defaulted (checksum over null) verifies too', () => {
    const e = event();
    const defaulted = { ...e, checksum: checksumOf(e, null) };
    const records: ChainRecord[] = [{ kind: 'event', item: defaulted }];
    expect(verify(seal(records), records).ok).toBe(true);
  });

  it('names the first broken link: changed content, changed metadata, a missing record, a removed link', () => {
    const records: ChainRecord[] = [
      { kind: 'event', item: event() },
      { kind: 'event', item: event({ id: '77777777-7777-4777-8777-777777777777', sourceEventId: 'm2', content: 'I drink tea' }) },
      { kind: 'overlay', item: overlay() },
    ];
    const links = seal(records);
    const changed = [records[0], { kind: 'event', item: { ...(records[1]?.item as EventItem), content: 'I drink coffee' } }, records[2]] as ChainRecord[];
    expect(verify(links, changed).broken).toEqual({
      position: 2,
      kind: 'event',
      id: '77777777-7777-4777-8777-777777777777',
      reason: 'the content does not match the event checksum',
    });
    const moved = [
      { kind: 'event', item: { ...(records[0]?.item as EventItem), ingestedAt: '2026-02-02T00:00:00.000000Z' } },
      records[1],
      records[2],
    ] as ChainRecord[];
    expect(verify(links, moved).broken?.reason).toBe("the event's fields differ from what was sealed");
    expect(verify(links, [records[0] as ChainRecord, null, records[2] as ChainRecord]).broken?.reason).toMatch(/is missing/);
    expect(verify([links[0], links[2]] as ChainLink[], [records[0], records[2]] as ChainRecord[]).broken).toMatchObject({
      position: 3,
      reason: expect.stringMatching(/missing or out of order/),
    });
    const forged = { ...(links[1] as ChainLink), itemHash: 'f'.repeat(64) };
    expect(verify([links[0], forged, links[2]] as ChainLink[], records).broken?.reason).toBe('the link hash does not match its seq, prev and item hash');
  });

  it('an erasure keeps the chain whole: the erased event, its overlays and the judge decisions it scrubbed verify', () => {
    const records: ChainRecord[] = [
      { kind: 'event', item: event() },
      { kind: 'overlay', item: overlay() },
      { kind: 'judge_decision', item: judge() },
      { kind: 'judge_decision', item: judge({ id: '88888888-8888-4888-8888-888888888888', factId: 'f-x' }) },
    ];
    const links = seal(records);
    const erasedEvent = { ...(records[0]?.item as EventItem), content: '', rawPayloadText: null, destroyedAt: '2026-03-01T00:00:00.000000Z' };
    const erasedOverlay = { ...overlay(), exact: '[erased]', prefix: '', suffix: '', body: null, reason: null, spanEnd: 18, textHash: 'erased' };
    const scrubbed = { ...judge(), statement: '[erased]', reason: '[erased]', candidates: [] };
    // Another decision that named the erased fact among its candidates: its reason may quote it, so it goes too.
    const filtered = { ...judge({ id: '88888888-8888-4888-8888-888888888888', factId: 'f-x' }), reason: '[erased]', candidates: [judge().candidates[1]] };
    const after = [
      { kind: 'event', item: erasedEvent },
      { kind: 'overlay', item: erasedOverlay },
      { kind: 'judge_decision', item: scrubbed },
      { kind: 'judge_decision', item: filtered },
    ] as ChainRecord[];
    expect(verify(links, after, [{}, { erased: true }, { erasedFacts: ['f-new'] }, { erasedFacts: ['f-old'] }]).ok).toBe(true);
    // The same scrubbing without an erasure behind it is tampering.
    expect(verify(links, after, [{}, { erased: false }, {}, {}]).broken).toMatchObject({
      position: 2,
      reason: 'the overlay text differs from what was sealed',
    });
    expect(verify(links, after, [{}, { erased: true }, {}, {}]).broken).toMatchObject({
      position: 3,
      reason: 'the judge statement differs from what was sealed',
    });
    expect(verify(links, after, [{}, { erased: true }, { erasedFacts: ['f-new'] }, {}]).broken).toMatchObject({
      position: 4,
      reason: 'the judge reason differs from what was sealed',
    });
    // A reason rewritten to anything but the erased mark, or without an erasure of a fact it names, is tampering.
    const rewritten = [...after.slice(0, 3), { kind: 'judge_decision', item: { ...filtered, reason: 'something else' } }] as ChainRecord[];
    expect(verify(links, rewritten, [{}, { erased: true }, { erasedFacts: ['f-new'] }, { erasedFacts: ['f-old'] }]).broken).toMatchObject({
      position: 4,
      reason: 'the judge reason differs from what was sealed',
    });
    const unnamed = [...after.slice(0, 3), { kind: 'judge_decision', item: { ...filtered, candidates: judge().candidates } }] as ChainRecord[];
    expect(verify(links, unnamed, [{}, { erased: true }, { erasedFacts: ['f-new'] }, {}]).broken).toMatchObject({
      position: 4,
      reason: 'the judge reason differs from what was sealed',
    });
    // An "erased" event that still holds content is not an erasure.
    const half = [{ kind: 'event', item: { ...erasedEvent, content: 'I live in Paris' } }, ...after.slice(1)] as ChainRecord[];
    expect(verify(links, half, [{}, { erased: true }, { erasedFacts: ['f-new'] }, { erasedFacts: ['f-old'] }]).broken?.reason).toBe(
      'an erased event still holds content',
    );
  });

  it('an overlay version is its own link (id:version), and its body is covered', () => {
    const records: ChainRecord[] = [
      { kind: 'overlay', item: overlay() },
      { kind: 'overlay', item: overlay({ version: 2, body: 'Lisbon' }) },
    ];
    const links = seal(records);
    expect(links.map((l) => l.itemId)).toEqual(['22222222-2222-4222-8222-222222222222:1', '22222222-2222-4222-8222-222222222222:2']);
    const edited = [records[0], { kind: 'overlay', item: overlay({ version: 2, body: 'Rome' }) }] as ChainRecord[];
    expect(verify(links, edited).broken).toMatchObject({ position: 2, reason: 'the overlay text differs from what was sealed' });
  });

  it('derived overlay ids are stable UUIDs per target namespace', () => {
    const a = derivedUuid('ns2:22222222-2222-4222-8222-222222222222');
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(derivedUuid('ns2:22222222-2222-4222-8222-222222222222')).toBe(a);
    expect(derivedUuid('ns3:22222222-2222-4222-8222-222222222222')).not.toBe(a);
  });
});

describe('retention checkpoints', () => {
  const records: ChainRecord[] = [
    { kind: 'event', item: event() },
    { kind: 'event', item: event({ id: '77777777-7777-4777-8777-777777777777', sourceEventId: 'm2', content: 'I drink tea' }) },
    { kind: 'overlay', item: overlay() },
    { kind: 'event', item: event({ id: '99999999-9999-4999-8999-999999999999', sourceEventId: 'm3', content: 'I swim' }) },
  ];
  const links = seal(records);
  const checkpoint = (over: Partial<RetentionCheckpoint> = {}): RetentionCheckpoint => ({
    id: '1',
    namespace: 'ns',
    partition: 'events_2026_01',
    rangeFrom: '2026-01-01T00:00:00.000000Z',
    rangeTo: '2026-02-01T00:00:00.000000Z',
    droppedEvents: 2,
    sealedEvents: 2,
    droppedLinks: '{[1,3)}',
    cutSeq: 3,
    cutHash: links[2]?.hash as string,
    approvalId: 'a',
    executedBy: 'b',
    createdAt: '2026-03-01T00:00:00.000000Z',
    signature: 'c',
    signatureValid: true,
    ...over,
  });
  const dropped = [null, null, records[2], records[3]] as Array<ChainRecord | null>;

  it('reads the text of an int8multirange', () => {
    expect(parseMultirange('{}')).toEqual([]);
    expect(parseMultirange('{[1,3),[7,8)}')).toEqual([
      [1, 3],
      [7, 8],
    ]);
    expect(parseMultirange('{(0,2]}')).toEqual([[1, 3]]);
  });

  it('events a valid checkpoint lists may be missing; the chain goes on past them', () => {
    expect(verify(links, dropped, [], [checkpoint()])).toMatchObject({ ok: true, links: 4, retained: 2, checkpoints: 1 });
    // Without it they are missing, and a checkpoint lists only the links it names.
    expect(verify(links, dropped).broken).toMatchObject({ position: 1, reason: expect.stringMatching(/is missing/) });
    expect(verify(links, dropped, [], [checkpoint({ droppedLinks: '{[1,2)}' })]).broken).toMatchObject({ position: 2 });
    // Only events: an overlay is never excused.
    expect(
      verify(links, [records[0], records[1], null, records[3]] as Array<ChainRecord | null>, [], [checkpoint({ droppedLinks: '{[3,4)}' })]).broken,
    ).toMatchObject({
      position: 3,
      reason: expect.stringMatching(/overlay .* is missing/),
    });
  });

  it('a checkpoint whose signature does not verify excuses nothing and breaks the chain at its cut', () => {
    expect(verify(links, dropped, [], [checkpoint({ signatureValid: false })]).broken).toMatchObject({
      position: 1,
      reason: expect.stringMatching(/signature does not verify/),
    });
    expect(verify(links, records, [], [checkpoint({ signatureValid: false })]).broken).toMatchObject({
      position: 3,
      reason: expect.stringMatching(/signature does not verify/),
    });
  });

  it('holds the chain to the head signed at the cut, and notices a chain that ends before it', () => {
    expect(verify(links, dropped, [], [checkpoint({ cutHash: 'f'.repeat(64) })]).broken).toMatchObject({
      position: 3,
      reason: expect.stringMatching(/differs from the chain head retention checkpoint 1/),
    });
    expect(verify(links.slice(0, 2), dropped.slice(0, 2), [], [checkpoint()]).broken).toMatchObject({
      position: 3,
      reason: expect.stringMatching(/chain ends at link 2, before link 3/),
    });
  });
});
