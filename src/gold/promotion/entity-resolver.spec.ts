import { resolveEntities, ResolverSettings } from './entity-resolver';
import { EntityJudge, EntityJudgeInput, SilverCandidate } from './promotion.types';
import { offlineEntityDecision } from './resolution-rules';

const settings: ResolverSettings = { candidateTrigram: 0.3, mergeTrigram: 0.6, mergeCosine: 0.85, fallbackType: 'concept' };

let clock = 0;
const entity = (id: string, name: string, type: string, over: Partial<SilverCandidate> = {}): SilverCandidate => ({
  id,
  type,
  name,
  nameKey: name.toLowerCase(),
  aliases: [],
  aliasKeys: [],
  confidence: 0.9,
  eventIds: [`ev-${id}`],
  conversationIds: ['c1'],
  recordedAt: new Date(Date.UTC(2026, 0, 1) + clock++ * 1000),
  retired: false,
  goldId: null,
  ...over,
});

/** The offline rules, recording every call it gets. */
const recordingJudge = (): EntityJudge & { calls: EntityJudgeInput[][] } => {
  const calls: EntityJudgeInput[][] = [];
  return { model: 'recording', promptVersion: 'test@1', calls, decide: async (qs) => (calls.push(qs), qs.map(offlineEntityDecision)) };
};
const pairsOf = (qs: EntityJudgeInput[]) => qs.map((q) => `${q.entity.id}~${q.partner.id}`);

describe('entity resolver: the judge is asked in one batch', () => {
  it('asks every hard question of a run in one call, and only the hard ones', async () => {
    const es = [
      entity('bob', 'Bob', 'person'),
      entity('bobSmith', 'Bob Smith', 'person'), // co-occurrence with Bob: no question
      entity('lower', 'bob', 'concept'), // same name, fallback type: hard
      entity('jon', 'Jon Smith', 'person', { conversationIds: ['w1'] }), // similar to Bob Smith, no shared context: hard
    ];
    const pairs = [
      { a: 'bobSmith', b: 'bob', trigram: 0.4 },
      { a: 'lower', b: 'bob', trigram: 1 },
      { a: 'lower', b: 'bobSmith', trigram: 0.4 },
      { a: 'jon', b: 'bobSmith', trigram: 0.43 },
    ];
    const judge = recordingJudge();
    const r = await resolveEntities({ entities: es, pairs, separations: new Set() }, settings, judge, null);
    expect(judge.calls).toHaveLength(1);
    expect(pairsOf(judge.calls[0] ?? []).sort()).toEqual(['jon~bobSmith', 'lower~bob', 'lower~bobSmith']);
    expect(r.assignments.map((a) => `${a.silverId}:${a.step}`)).toEqual(['bob:new', 'bobSmith:cooccurrence', 'lower:judge', 'jon:new']);
    expect(r.assignments.find((a) => a.silverId === 'lower')).toMatchObject({ judgeModel: 'recording', promptVersion: 'test@1' });
    expect(r.judgedTypes.get('new:bob')).toBe('person');
  });

  it('asks on demand a question a split made necessary, and never joins the split-apart cluster', async () => {
    // "Bob" (pending) was split apart from the Gold entity g1's "Bob": the exact step cannot use it,
    // so its other candidate, "bob" (concept) of g2, goes to the judge, unforeseen by the batch.
    const es = [entity('old', 'Bob', 'person', { goldId: 'g1' }), entity('other', 'bob', 'concept', { goldId: 'g2' }), entity('u', 'Bob', 'person')];
    const pairs = [
      { a: 'u', b: 'old', trigram: 1 },
      { a: 'u', b: 'other', trigram: 1 },
    ];
    const judge = recordingJudge();
    const r = await resolveEntities({ entities: es, pairs, separations: new Set(['old|u']) }, settings, judge, null);
    expect(judge.calls.map(pairsOf)).toEqual([['u~other']]);
    expect(r.assignments).toEqual([expect.objectContaining({ silverId: 'u', cluster: 'g2', step: 'judge', partnerId: 'other' })]);
  });
});

describe('entity resolver: an entity is placed against its own candidates', () => {
  it("places the rest of a resumed run as the whole run did, when a cap kept an earlier entity out of a later one's candidates", async () => {
    // "Bob Smith" is among "Bob"'s candidates, but "Bob"'s name is not among "Bob Smith"'s (the
    // cap kept only "Bob Smithe"): the pair Bob → Bob Smith must not place "Bob Smith", or a run
    // resumed after "Bob" was committed (a member now, no candidates of its own) would differ.
    const bob = entity('bob', 'Bob', 'person');
    const bobSmith = entity('bobSmith', 'Bob Smith', 'person');
    const smithe = entity('smithe', 'Bob Smithe', 'person', { conversationIds: ['c9'] });
    const pairs = [
      { a: 'bob', b: 'bobSmith', trigram: 0.4 },
      { a: 'bobSmith', b: 'smithe', trigram: 0.8 },
      { a: 'smithe', b: 'bobSmith', trigram: 0.8 },
    ];
    const whole = await resolveEntities({ entities: [bob, bobSmith, smithe], pairs, separations: new Set() }, settings, recordingJudge(), null);
    const bobCluster = whole.assignments.find((a) => a.silverId === 'bob')?.cluster as string;
    const resumed = await resolveEntities(
      { entities: [{ ...bob, goldId: 'g-bob' }, bobSmith, smithe], pairs: pairs.filter((p) => p.a !== 'bob'), separations: new Set() },
      settings,
      recordingJudge(),
      null,
    );
    const placed = (r: typeof whole, cluster: string) =>
      r.assignments.filter((a) => a.silverId !== 'bob').map((a) => ({ id: a.silverId, step: a.step, withBob: a.cluster === cluster }));
    expect(placed(resumed, 'g-bob')).toEqual(placed(whole, bobCluster));
    expect(placed(whole, bobCluster)).toEqual([
      { id: 'bobSmith', step: 'new', withBob: false },
      { id: 'smithe', step: 'new', withBob: false },
    ]);
  });
});

describe('entity resolver: the first-name step', () => {
  // Each event its own context (no conversation): co-occurrence cannot merge them.
  const alone = (id: string, name: string, type = 'person', over: Partial<SilverCandidate> = {}) =>
    entity(id, name, type, { conversationIds: [`event:${id}`], ...over });

  it('merges a lone first name into the only full name of the namespace that starts with it, without a shared context', async () => {
    const es = [alone('smith', 'Bob Smith'), alone('bob', 'Bob')];
    const r = await resolveEntities(
      { entities: es, pairs: [{ a: 'bob', b: 'smith', trigram: 0.4 }], separations: new Set() },
      settings,
      recordingJudge(),
      null,
    );
    expect(r.assignments.map((a) => `${a.silverId}:${a.step}`)).toEqual(['smith:new', 'bob:first_name']);
    expect(r.assignments[1]?.reason).toBe('"bob" is the first name of the only person named "bob smith"');
    expect(r.clusters.get('new:smith')).toEqual(['smith', 'bob']);
  });

  it('joins a full name to a Gold entity that holds the lone first name, whichever came first', async () => {
    const es = [alone('bob', 'Bob', 'person', { goldId: 'g1' }), alone('smith', 'Mr. Bob Smith')];
    const r = await resolveEntities(
      { entities: es, pairs: [{ a: 'smith', b: 'bob', trigram: 0.3 }], separations: new Set() },
      settings,
      recordingJudge(),
      null,
    );
    expect(r.assignments.map((a) => `${a.silverId}:${a.step}:${a.cluster}`)).toEqual(['smith:first_name:g1']);
  });

  it('never merges when two full names start with it, nor across types, nor for other types than persons', async () => {
    const two = [alone('smith', 'Bob Smith'), alone('jones', 'Bob Jones'), alone('bob', 'Bob')];
    const pairs = [
      { a: 'bob', b: 'smith', trigram: 0.4 },
      { a: 'bob', b: 'jones', trigram: 0.4 },
    ];
    const judge = recordingJudge();
    const r = await resolveEntities({ entities: two, pairs, separations: new Set() }, settings, judge, null);
    expect(r.assignments.map((a) => `${a.silverId}:${a.step}`)).toEqual(['smith:new', 'jones:new', 'bob:new']);
    // The judge saw both pairs and kept them apart: no shared conversation.
    expect(r.assignments[2]?.rejected.map((x) => x.partnerId).sort()).toEqual(['jones', 'smith']);

    const types = [
      alone('acme', 'Acme Corp', 'organization'),
      alone('a', 'Acme', 'organization'),
      alone('pbob', 'Bob Smith'),
      alone('tbob', 'Bob', 'technology'),
    ];
    const r2 = await resolveEntities(
      {
        entities: types,
        pairs: [
          { a: 'a', b: 'acme', trigram: 0.5 },
          { a: 'tbob', b: 'pbob', trigram: 0.4 },
        ],
        separations: new Set(),
      },
      settings,
      recordingJudge(),
      null,
    );
    expect(r2.assignments.every((a) => a.step === 'new')).toBe(true);
  });

  it('is off with personType null', async () => {
    const es = [alone('smith', 'Bob Smith'), alone('bob', 'Bob')];
    const r = await resolveEntities(
      { entities: es, pairs: [{ a: 'bob', b: 'smith', trigram: 0.4 }], separations: new Set() },
      { ...settings, personType: null },
      recordingJudge(),
      null,
    );
    expect(r.assignments.map((a) => a.step)).toEqual(['new', 'new']);
  });
});
