import { RuleJudge } from '../../src/models/offline/rule-judge';
import { DeriveService } from '../../src/silver/derive.service';
import { ExtractedFact, Extractor, Judge, JudgeDecision, JudgeInput } from '../../src/silver/model-ports';
import { BronzeEvent } from '../../src/bronze/event.types';
import { planFactWrites } from '../../src/silver/write/plan-writes';
import { Entity, Fact } from '../../src/silver/silver.types';
import { anEvent } from '../builders/bronze-event';
import { anEntity } from '../builders/entity';
import { aFact } from '../builders/fact';
import { FakeEmbedder, InMemoryCandidates, ScriptedExtractor, ScriptedFact, ScriptedJudge } from '../fakes/silver-ports';

/**
 * Service tier: the rules of derivation (plan, then what the writer will apply) with fake ports
 * and builders. No database and no model: the real adapters are covered by test/integration.
 */
const NS = 'plan-test';
const user = anEntity().inNamespace(NS).named('the user').build();

function service(script: Record<string, ScriptedFact[]>, judge: Judge, facts: Fact[] = [], entities: Entity[] = [user]) {
  return new DeriveService({ extractor: new ScriptedExtractor(script), judge, embedder: new FakeEmbedder() }, new InMemoryCandidates(facts, entities), {
    candidateLimit: 8,
    trigramThreshold: 0.3,
  });
}
const targetFirst =
  (action: JudgeDecision['action']) =>
  (input: JudgeInput): JudgeDecision => {
    const c = input.candidates[0];
    return c ? { action, targetId: c.id, reason: `${action} ${c.statement}` } : { action: 'ADD', targetId: null, reason: 'new' };
  };
const sameStatementSkips = (input: JudgeInput): JudgeDecision => {
  const same = input.candidates.find((c) => c.statement === input.fact.statement);
  return same ? { action: 'SKIP', targetId: same.id, reason: 'known' } : { action: 'ADD', targetId: null, reason: 'new' };
};
const said = (content: string, at: string) => anEvent().inNamespace(NS).saying(content).at(at).build();

describe('derivation plan (service tier, fake ports)', () => {
  const vim = aFact().inNamespace(NS).about(user).saying('The user uses vim', 'uses', 'vim').validFrom('2026-01-01T00:00:00Z').build();

  it('SUPERSEDE: the stored fact is reused as the target and closed where the new fact starts', async () => {
    const judge = new ScriptedJudge(targetFirst('SUPERSEDE'));
    const svc = service({ 'I switched to neovim': [{ statement: 'The user uses neovim', predicate: 'uses', objectValue: 'neovim' }] }, judge, [vim]);
    const plan = await svc.plan(NS, [said('I switched to neovim', '2026-02-10T09:00:00Z')]);

    expect(plan.entities).toEqual([expect.objectContaining({ id: user.id, isNew: false })]);
    const [fact] = plan.facts;
    expect(fact).toMatchObject({ action: 'SUPERSEDE', targetId: vim.id, subjectEntityId: user.id, validFrom: new Date('2026-02-10T09:00:00Z') });
    const writes = planFactWrites(plan, new Date('2026-02-10T09:00:01Z'));
    expect(writes.changes).toEqual([{ id: vim.id, validTo: new Date('2026-02-10T09:00:00Z'), retiredAt: null, supersededBy: fact?.id }]);
    expect(writes.replaced).toEqual([{ oldId: vim.id, newId: fact?.id }]);
  });

  it('UPDATE: the refined fact keeps the earliest start; the old belief is retired at the write’s clock', async () => {
    const judge = new ScriptedJudge(targetFirst('UPDATE'));
    const svc = service({ 'I use vim with plugins': [{ statement: 'The user uses vim with many plugins', predicate: 'uses', objectValue: 'vim' }] }, judge, [
      vim,
    ]);
    const plan = await svc.plan(NS, [said('I use vim with plugins', '2026-03-01T09:00:00Z')]);
    expect(plan.facts[0]).toMatchObject({ action: 'UPDATE', targetId: vim.id, validFrom: vim.validFrom });
    const now = new Date('2026-03-01T09:00:05Z');
    expect(planFactWrites(plan, now).changes).toEqual([{ id: vim.id, validTo: null, retiredAt: now, supersededBy: plan.facts[0]?.id }]);
  });

  it('a target the judge was not shown becomes ADD, says so, and changes nothing', async () => {
    const judge = new ScriptedJudge(() => ({ action: 'SUPERSEDE', targetId: '00000000-0000-0000-0000-000000000000', reason: 'made up' }));
    const plan = await service({ x: [{ statement: 'The user uses emacs' }] }, judge, [vim]).plan(NS, [said('x', '2026-02-01T00:00:00Z')]);
    expect(plan.facts[0]).toMatchObject({ action: 'ADD', targetId: null });
    expect(plan.facts[0]?.reason).toMatch(/is not a candidate: added instead/);
    expect(planFactWrites(plan, new Date()).changes).toEqual([]);
  });

  it('never shows the judge a superseded or retired fact', async () => {
    const closed = aFact().inNamespace(NS).about(user).saying('The user uses nano').supersededBy(vim.id, '2026-01-01T00:00:00Z').build();
    const retired = aFact().inNamespace(NS).about(user).saying('The user uses ed').retiredAt('2026-01-02T00:00:00Z').build();
    const judge = new ScriptedJudge();
    await service({ x: [{ statement: 'The user uses helix' }] }, judge, [vim, closed, retired]).plan(NS, [said('x', '2026-02-01T00:00:00Z')]);
    expect(judge.seen[0]?.candidates.map((c) => c.id)).toEqual([vim.id]);
  });

  it('repeats in one batch corroborate the first: folded into its insert, within the +0.2 importance cap', async () => {
    const events = Array.from({ length: 8 }, (_, i) =>
      anEvent()
        .inNamespace(NS)
        .inConversation('c', i)
        .saying('tea')
        .at(`2026-01-0${i + 1}T09:00:00Z`)
        .build(),
    );
    const plan = await service({ tea: [{ statement: 'The user likes green tea' }] }, new ScriptedJudge(sameStatementSkips)).plan(NS, events);
    expect(plan.facts.map((f) => f.action)).toEqual(['ADD', ...Array(7).fill('SKIP')]);
    const writes = planFactWrites(plan, new Date());
    // preference 0.7 + min(0.2, 7 × 0.05); confidence 0.9 × 1.0 (user) + 7 × 0.05 → 0.99.
    expect(writes.inserts).toEqual([expect.objectContaining({ statement: 'The user likes green tea', confidence: 0.99, importance: 0.9 })]);
    expect(new Set(writes.sources.map((s) => s.factId))).toEqual(new Set([plan.facts[0]?.id]));
    expect(writes.sources).toHaveLength(8);
    expect(writes.corroboratedStored).toEqual([]);
  });

  it('a repeat of a stored fact asks the store to corroborate it and attaches its source there', async () => {
    const tea = aFact().inNamespace(NS).about(user).saying('The user likes green tea', null, null).build();
    const plan = await service({ tea: [{ statement: 'The user likes green tea' }] }, new ScriptedJudge(sameStatementSkips), [tea]).plan(NS, [
      said('tea', '2026-02-01T00:00:00Z'),
    ]);
    const writes = planFactWrites(plan, new Date());
    expect(writes.inserts).toEqual([]);
    expect(writes.corroboratedStored).toEqual([{ id: tea.id, added: 1 }]);
    expect(writes.sources.map((s) => s.factId)).toEqual([tea.id]);
  });

  it('a later fact of a batch meets the fact an earlier one put in place of a stored one, never the superseded one', async () => {
    const judge = new ScriptedJudge(targetFirst('SUPERSEDE'));
    const script = {
      neovim: [{ statement: 'The user uses neovim', predicate: 'uses', objectValue: 'neovim' }],
      helix: [{ statement: 'The user uses helix', predicate: 'uses', objectValue: 'helix' }],
    };
    const plan = await service(script, judge, [vim]).plan(NS, [said('neovim', '2026-02-01T00:00:00Z'), said('helix', '2026-03-01T00:00:00Z')]);
    const [neovim, helix] = plan.facts;
    expect(judge.seen[1]?.candidates.map((c) => c.id)).toEqual([neovim?.id]);
    const { changes, replaced } = planFactWrites(plan, new Date());
    expect(replaced).toEqual([
      { oldId: vim.id, newId: neovim?.id },
      { oldId: neovim?.id, newId: helix?.id },
    ]);
    expect(changes).toEqual([
      { id: vim.id, validTo: new Date('2026-02-01T00:00:00Z'), retiredAt: null, supersededBy: neovim?.id },
      { id: neovim?.id, validTo: new Date('2026-03-01T00:00:00Z'), retiredAt: null, supersededBy: helix?.id },
    ]);
  });

  it('a batch decides what the same events decide one per batch: a restatement after its contradiction restores it', async () => {
    const script = {
      'I use emacs': [{ statement: 'The user uses emacs', predicate: 'use', objectValue: 'emacs' }],
      'I no longer use emacs': [{ statement: 'The user does not use emacs', predicate: 'use', objectValue: 'emacs', isNegation: true }],
    };
    const events = [
      said('I use emacs', '2026-02-01T09:00:00Z'),
      said('I no longer use emacs', '2026-02-01T09:01:00Z'),
      said('I use emacs', '2026-02-01T09:02:00Z'),
    ];
    const plan = await service(script, new RuleJudge()).plan(NS, events);
    const [first, negation, again] = plan.facts;
    expect(plan.facts.map((f) => [f.action, f.targetId])).toEqual([
      ['ADD', null],
      ['SUPERSEDE', first?.id],
      ['SUPERSEDE', negation?.id],
    ]);
    // The superseded first statement is no candidate of the third: it would have been a SKIP into a closed fact.
    expect(again?.candidates.map((c) => c.id)).toEqual([negation?.id]);
  });

  it('a statement the extractor merged over two events is judged in each event’s place when its subject changed in between', async () => {
    const events = [
      said('I use emacs', '2026-02-01T09:00:00Z'),
      said('I no longer use emacs', '2026-02-01T09:01:00Z'),
      said('I use emacs', '2026-02-01T09:02:00Z'),
    ];
    const [first, stop, again] = events as [BronzeEvent, BronzeEvent, BronzeEvent];
    const fact = (statement: string, isNegation: boolean, sources: BronzeEvent[]): ExtractedFact => ({
      ref: statement,
      statement,
      factType: 'preference',
      subjectRef: 'u',
      predicate: 'use',
      objectValue: 'emacs',
      objectRef: null,
      isNegation,
      confidence: 0.9,
      validFrom: null,
      validTo: null,
      replacesValue: null,
      sources: sources.map((e) => ({ eventId: e.id, start: 0, end: e.content.length })),
    });
    // As the offline extractor returns them: the repeat merged into the first saying.
    const merging: Extractor = {
      model: 'merging@1',
      extract: async () => ({
        entities: [{ ref: 'u', name: 'the user', type: 'person', aliases: [], mentions: [] }],
        facts: [fact('The user uses emacs', false, [first, again]), fact('The user does not use emacs', true, [stop])],
        relationships: [],
      }),
    };
    const svc = new DeriveService({ extractor: merging, judge: new RuleJudge(), embedder: new FakeEmbedder() }, new InMemoryCandidates([], [user]), {
      candidateLimit: 8,
      trigramThreshold: 0.3,
    });
    const plan = await svc.plan(NS, events);
    expect(plan.facts.map((f) => [f.statement, f.action, f.sources.map((x) => x.eventId)])).toEqual([
      ['The user uses emacs', 'ADD', [first.id]],
      ['The user does not use emacs', 'SUPERSEDE', [stop.id]],
      ['The user uses emacs', 'SUPERSEDE', [again.id]],
    ]);
    expect(plan.facts[2]?.targetId).toBe(plan.facts[1]?.id);
  });

  it('an older statement that arrives after a newer one is stored superseded by it; the newer one holds', async () => {
    const stopped = aFact().inNamespace(NS).about(user).saying('The user does not use vim', 'use', 'vim').negated().validFrom('2026-03-01T00:00:00Z').build();
    const script = { 'I use vim': [{ statement: 'The user uses vim', predicate: 'use', objectValue: 'vim' }] };
    const plan = await service(script, new RuleJudge(), [stopped]).plan(NS, [said('I use vim', '2026-02-01T00:00:00Z')]);
    const [late] = plan.facts;
    expect(late).toMatchObject({ action: 'ADD', targetId: null, supersededBy: stopped.id, validTo: new Date('2026-03-01T00:00:00Z') });
    expect(late?.reason).toMatch(/was said later/);
    expect(planFactWrites(plan, new Date()).changes).toEqual([]);
  });

  it('records which extractor, prompt versions and models made the plan', async () => {
    const plan = await service({}, new ScriptedJudge()).plan(NS, [said('nothing', '2026-01-01T00:00:00Z')]);
    expect(plan.models).toEqual({
      extraction: 'scripted-extractor@1',
      judge: 'scripted-judge@1',
      embedding: 'fake-embedder@1',
      extractor: 'scripted',
      extractionPrompt: 'scripted-prompt@1',
      judgePrompt: null,
    });
  });
});
