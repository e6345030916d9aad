import fs from 'node:fs';
import path from 'node:path';
import type { ExtractedFact, ExtractionContext, ExtractionEvent, ExtractionResult, JudgeCandidate } from '../src/silver/model-ports';
import { ENTITY_TYPES, FACT_TYPES, RELATIONSHIP_TYPES } from '../src/silver/ontology';
import { normaliseValue, sameValue, tokenJaccard } from '../src/silver/vocabulary/normalise';
import { RuleExtractor } from '../src/models/offline/rule-extractor';
import { RuleJudge } from '../src/models/offline/rule-judge';
import { applyQualityGate } from '../src/silver/quality-gate';
import { malformedStatement } from '../src/silver/statement-shape';
import { report, round } from './harness';

/**
 * Quality of the offline extractor and judge:
 * 1. the hand-labelled fixture test/fixtures/extraction/turns.jsonl (labels written before the rules
 *    were tuned; conversations are the id prefix before "-", extracted one conversation per batch);
 * 2. DialogRE dev (relation extraction on the relation types the ontology can express);
 * 3. ProSeCCo dev (self-contradiction detection through the judge).
 * Public data is read from ../shared/eval/ beside the repository (or BENCH_EVAL_DIR) and skipped when absent.
 *
 * Fixture matching rule (lenient): a predicted fact of the turn matches an unmatched gold fact with
 * the same factType, the same isNegation and the same object: equal after normalisation (lowercase,
 * stop words and punctuation dropped, light stemming, gazetteer aliases → canonical name) or a
 * content-token Jaccard ≥ 0.5. Subject and predicate are not compared (predicate vocabularies
 * differ between labeller and rules). "strict" additionally requires the same subject (speaker
 * name, or the normalised subject phrase).
 */
const ROOT = path.resolve(__dirname.includes(`${path.sep}dist${path.sep}`) ? path.join(__dirname, '..', '..') : path.join(__dirname, '..'));
const EVAL = process.env.BENCH_EVAL_DIR ?? path.resolve(ROOT, '..', 'shared', 'eval');
const CTX: ExtractionContext = { namespace: 'bench', entityTypes: ENTITY_TYPES, relationshipTypes: RELATIONSHIP_TYPES, factTypes: FACT_TYPES };
const OBJECT_JACCARD = 0.5;

interface Gold {
  factType: string;
  subject: string;
  predicate: string;
  object: string;
  isNegation: boolean;
}
interface Turn {
  id: string;
  role: string;
  actor?: string;
  content: string;
  occurredAt: string;
  expected: Gold[];
}
interface Counts {
  tp: number;
  fp: number;
  fn: number;
}

const prf = (c: Counts) => {
  const precision = c.tp + c.fp === 0 ? 0 : c.tp / (c.tp + c.fp);
  const recall = c.tp + c.fn === 0 ? 0 : c.tp / (c.tp + c.fn);
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  return { ...c, precision: round(precision, 3), recall: round(recall, 3), f1: round(f1, 3) };
};

const toEvent = (id: string, content: string, role: string, actor: string | null, at: Date, conv: string, seq: number): ExtractionEvent => ({
  id,
  content,
  kind: 'message',
  role,
  actor,
  occurredAt: at,
  conversationId: conv,
  sequenceNum: seq,
});

const subjectOf = (res: ExtractionResult, f: ExtractedFact): string => res.entities.find((e) => e.ref === f.subjectRef)?.name ?? '';

async function fixtureQuality(): Promise<Record<string, unknown>> {
  const file = path.join(ROOT, 'test', 'fixtures', 'extraction', 'turns.jsonl');
  const turns = fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Turn);
  const convs = new Map<string, Turn[]>();
  for (const t of turns) {
    const c = t.id.split('-')[0] as string;
    convs.set(c, [...(convs.get(c) ?? []), t]);
  }
  const extractor = new RuleExtractor();
  const lenient = new Map<string, Counts>();
  const strict: Counts = { tp: 0, fp: 0, fn: 0 };
  const bump = (type: string, k: keyof Counts) => {
    const c = lenient.get(type) ?? { tp: 0, fp: 0, fn: 0 };
    c[k]++;
    lenient.set(type, c);
  };
  const started = Date.now();
  let predicted = 0;
  for (const [conv, ts] of convs) {
    const res = await extractor.extract(
      ts.map((t, i) => toEvent(t.id, t.content, t.role, t.actor ?? null, new Date(t.occurredAt), conv, i)),
      CTX,
    );
    for (const t of ts) {
      const preds = res.facts.filter((f) => f.sources[0]?.eventId === t.id);
      predicted += preds.length;
      for (const mode of ['lenient', 'strict'] as const) {
        const open = [...t.expected];
        for (const p of preds) {
          const i = open.findIndex(
            (g) =>
              g.factType === p.factType &&
              g.isNegation === p.isNegation &&
              sameValue(g.object, p.objectValue, OBJECT_JACCARD) &&
              (mode === 'lenient' || normaliseValue(g.subject) === normaliseValue(subjectOf(res, p))),
          );
          if (i >= 0) open.splice(i, 1);
          if (mode === 'lenient') bump(p.factType, i >= 0 ? 'tp' : 'fp');
          else strict[i >= 0 ? 'tp' : 'fp']++;
        }
        for (const g of open) {
          if (mode === 'lenient') bump(g.factType, 'fn');
          else strict.fn++;
        }
      }
    }
  }
  const overall = [...lenient.values()].reduce((a, c) => ({ tp: a.tp + c.tp, fp: a.fp + c.fp, fn: a.fn + c.fn }), { tp: 0, fp: 0, fn: 0 });
  const perType = Object.fromEntries(FACT_TYPES.filter((t) => lenient.has(t)).map((t) => [t, prf(lenient.get(t) as Counts)]));
  return {
    turns: turns.length,
    goldFacts: turns.reduce((n, t) => n + t.expected.length, 0),
    predictedFacts: predicted,
    msPerTurn: round((Date.now() - started) / turns.length, 2),
    overall: prf(overall),
    strictSubject: prf(strict),
    perType,
  };
}

// Our predicates → DialogRE relations (x = our subject, y = our object); inverse types are matched swapped.
const DIALOGRE_OF: Record<string, string> = {
  lives_in: 'per:place_of_residence',
  located_in: 'per:place_of_residence',
  from: 'per:origin',
  grew_up_in: 'per:origin',
  works_at: 'per:employee_or_member_of',
  name: 'per:alternate_names',
  role: 'per:title',
  is_a: 'per:title',
  spouse: 'per:spouse',
  sibling: 'per:siblings',
  parent: 'per:parents',
  child: 'per:children',
  has_manager: 'per:boss',
  friend: 'per:friends',
  dating: 'per:girl/boyfriend',
  roommate: 'per:roommate',
  neighbor: 'per:neighbor',
  has_pet: 'per:pet',
  colleague: 'per:acquaintance',
};
const INVERSE: Record<string, string> = {
  'gpe:residents_of_place': 'per:place_of_residence',
  'org:employees_or_members': 'per:employee_or_member_of',
  'gpe:births_in_place': 'per:place_of_birth',
};
const SYMMETRIC = new Set([
  'per:alternate_names',
  'per:spouse',
  'per:siblings',
  'per:friends',
  'per:girl/boyfriend',
  'per:roommate',
  'per:neighbor',
  'per:acquaintance',
]);
const MAPPABLE = new Set([...Object.values(DIALOGRE_OF), 'per:positive_impression', 'per:negative_impression']);

const sameName = (a: string, b: string): boolean => {
  const x = a
    .toLowerCase()
    .replace(/[^a-z0-9 ]/g, '')
    .trim();
  const y = b
    .toLowerCase()
    .replace(/[^a-z0-9 ]/g, '')
    .trim();
  return x.length > 0 && (x === y || ` ${x} `.includes(` ${y} `) || ` ${y} `.includes(` ${x} `));
};

async function dialogreQuality(): Promise<Record<string, unknown>> {
  const file = path.join(EVAL, 'dialogre', 'dev.json');
  if (!fs.existsSync(file)) return { skipped: `not found: ${file}` };
  type Rel = { x: string; y: string; r: string[] };
  const data = JSON.parse(fs.readFileSync(file, 'utf8')) as Array<[string[], Rel[]]>;
  const extractor = new RuleExtractor();
  let gold = 0,
    mappable = 0,
    matchedGold = 0,
    preds = 0,
    correct = 0;
  const perRelation: Record<string, Counts> = {};
  const bump = (r: string, k: keyof Counts) => (perRelation[r] ??= { tp: 0, fp: 0, fn: 0 })[k]++;
  const base = new Date('2025-01-01T00:00:00Z');
  for (const [d, [lines, rels]] of data.entries()) {
    const events = lines.map((line, i) => {
      const m = /^([^:]{1,40}):\s*(.*)$/s.exec(line);
      const speaker = (m?.[1] ?? 'Speaker').split(',')[0]?.trim() ?? 'Speaker';
      return toEvent(`d${d}-${i}`, m?.[2] ?? line, 'user', speaker, new Date(base.getTime() + i * 60_000), `d${d}`, i);
    });
    const res = await extractor.extract(events, CTX);
    const golds = rels.flatMap((g) => g.r.map((r) => (INVERSE[r] ? { x: g.y, y: g.x, r: INVERSE[r] as string } : { x: g.x, y: g.y, r })));
    gold += golds.length;
    const open = golds.filter((g) => MAPPABLE.has(g.r));
    mappable += open.length;
    const seen = new Set<string>();
    for (const f of res.facts) {
      if (!f.predicate || !f.objectValue) continue;
      const r =
        f.predicate === 'likes' ? (f.isNegation ? 'per:negative_impression' : 'per:positive_impression') : f.isNegation ? undefined : DIALOGRE_OF[f.predicate];
      if (!r) continue;
      const x = subjectOf(res, f);
      const key = `${x}|${r}|${f.objectValue}`.toLowerCase();
      if (seen.has(key)) continue;
      seen.add(key);
      preds++;
      const i = open.findIndex(
        (g) =>
          g.r === r &&
          ((sameName(g.x, x) && sameName(g.y, f.objectValue as string)) || (SYMMETRIC.has(r) && sameName(g.y, x) && sameName(g.x, f.objectValue as string))),
      );
      if (i >= 0) {
        correct++;
        matchedGold++;
        bump(r, 'tp');
        open.splice(i, 1);
      } else bump(r, 'fp');
    }
    for (const g of open) bump(g.r, 'fn');
  }
  const precision = preds === 0 ? 0 : correct / preds;
  const recall = mappable === 0 ? 0 : matchedGold / mappable;
  return {
    dialogues: data.length,
    goldRelations: gold,
    mappableGold: mappable,
    coverage: round(mappable / Math.max(1, gold), 3),
    predicted: preds,
    correct,
    precision: round(precision, 3),
    recall: round(recall, 3),
    f1: round(precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall), 3),
    perRelation: Object.fromEntries(
      Object.entries(perRelation)
        .sort()
        .map(([k, c]) => [k, prf(c)]),
    ),
  };
}

async function proseccoQuality(): Promise<Record<string, unknown>> {
  const file = path.join(EVAL, 'prosecco', 'ProSeCCo_dev.jsonl');
  if (!fs.existsSync(file)) return { skipped: `not found: ${file}` };
  const rows = fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l.replace(/:\s*NaN\b/g, ': null')) as { id: string; proposition_1: string; proposition_2: string; label: string });
  const extractor = new RuleExtractor();
  const judge = new RuleJudge();
  const cm = { tp: 0, fp: 0, fn: 0, tn: 0 };
  let withFacts = 0,
    judged = 0;
  const actions: Record<string, number> = {};
  const t1 = new Date('2025-01-01T10:00:00Z');
  const t2 = new Date('2025-01-01T10:05:00Z');
  for (const row of rows) {
    const events = [
      toEvent(`${row.id}-1`, row.proposition_1, 'user', 'speaker', t1, row.id, 0),
      toEvent(`${row.id}-2`, row.proposition_2, 'user', 'speaker', t2, row.id, 1),
    ];
    const res = await extractor.extract(events, CTX);
    const first = res.facts.filter((f) => f.sources[0]?.eventId === events[0]?.id);
    const second = res.facts.filter((f) => f.sources[0]?.eventId === events[1]?.id);
    if (first.length > 0 && second.length > 0) withFacts++;
    const candidates: JudgeCandidate[] = first.map((f) => ({
      id: f.ref,
      statement: f.statement,
      factType: f.factType,
      subjectName: subjectOf(res, f),
      predicate: f.predicate,
      objectValue: f.objectValue,
      isNegation: f.isNegation,
      validFrom: t1,
      similarity: 0, // similarity filled per new fact below
    }));
    let contradiction = false;
    for (const f of second) {
      const scored = candidates.map((c) => ({ ...c, similarity: round(tokenJaccard(c.statement, f.statement), 3) }));
      const [decision] = await judge.decide([
        {
          fact: {
            statement: f.statement,
            factType: f.factType,
            subjectName: subjectOf(res, f),
            predicate: f.predicate,
            objectValue: f.objectValue,
            isNegation: f.isNegation,
            validFrom: t2,
            replacesValue: f.replacesValue,
          },
          candidates: scored,
        },
      ]);
      judged++;
      actions[decision?.action ?? 'none'] = (actions[decision?.action ?? 'none'] ?? 0) + 1;
      if (decision?.action === 'SUPERSEDE') contradiction = true;
    }
    const gold = row.label === 'self-contradiction';
    if (contradiction && gold) cm.tp++;
    else if (contradiction) cm.fp++;
    else if (gold) cm.fn++;
    else cm.tn++;
  }
  const n = rows.length;
  return {
    pairs: n,
    pairsWithFactsOnBothSides: withFacts,
    newFactsJudged: judged,
    judgeActions: actions,
    accuracy: round((cm.tp + cm.tn) / Math.max(1, n), 3),
    ...prf(cm),
    confusion: { predictedContradiction: { gold: cm.tp, notGold: cm.fp }, predictedNone: { gold: cm.fn, notGold: cm.tn } },
    note: 'similarity = token Jaccard of statements (no embedder in this bench); a pair is predicted contradictory when any proposition-2 fact SUPERSEDEs a proposition-1 fact',
  };
}

/** `npm run bench -- extract-quality`. */
/**
 * Malformed statements (issue 44, item 5) on test/fixtures/extraction/malformed-turns.jsonl: turns
 * whose value is followed by an aside, a relative clause or a cut ("I'm allergic to peanuts, so be
 * careful with recipes", "I booked a table at Nopa and"), each its own batch. Counts the
 * statements `malformedStatement` (src/silver/statement-shape.ts) finds in the extractor's output
 * and in what the quality gate lets through (what Silver writes), and how many of the values each
 * turn does state (`keep`) a fact still holds. The same counts over the labelled fixture's turns.
 */
async function malformedQuality(): Promise<Record<string, unknown>> {
  const extractor = new RuleExtractor();
  const count = async (file: string) => {
    const turns = fs
      .readFileSync(path.join(ROOT, 'test', 'fixtures', 'extraction', file), 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as { id: string; role: string; actor?: string; content: string; occurredAt: string; keep?: string[] });
    let facts = 0;
    let extracted = 0;
    let written = 0;
    let kept = 0;
    let wanted = 0;
    const examples: string[] = [];
    for (const t of turns) {
      const events = [toEvent(t.id, t.content, t.role, t.actor ?? null, new Date(t.occurredAt), t.id, 1)];
      const res = await extractor.extract(events, CTX);
      const gated = applyQualityGate(res, events).result;
      facts += res.facts.length;
      const bad = res.facts.filter((f) => malformedStatement(f.statement, f.objectValue));
      extracted += bad.length;
      if (examples.length < 10) examples.push(...bad.map((f) => f.statement));
      written += gated.facts.filter((f) => malformedStatement(f.statement, f.objectValue)).length;
      for (const v of t.keep ?? []) {
        wanted++;
        if (gated.facts.some((f) => sameValue(f.objectValue, v, OBJECT_JACCARD))) kept++;
      }
    }
    return { turns: turns.length, facts, malformedExtracted: extracted, malformedWritten: written, valuesKept: `${kept}/${wanted}`, examples };
  };
  return {
    malformedTurns: await count('malformed-turns.jsonl'),
    labelledTurns: await count('turns.jsonl'),
    definition:
      'malformedExtracted: statements of the rule extractor that src/silver/statement-shape.ts reads as malformed (object a dangling clause, verb phrase cut); malformedWritten: the same after the quality gate (what Silver writes); valuesKept: values a turn states that a written fact holds',
  };
}

export async function extractQuality(): Promise<void> {
  const fixture = await fixtureQuality();
  const malformed = await malformedQuality();
  const dialogre = await dialogreQuality();
  if ('skipped' in dialogre) process.stdout.write(`DialogRE skipped: ${String(dialogre.skipped)}\n`);
  const prosecco = await proseccoQuality();
  if ('skipped' in prosecco) process.stdout.write(`ProSeCCo skipped: ${String(prosecco.skipped)}\n`);
  report('extract-quality', { extractor: new RuleExtractor().model, fixture, malformed, dialogre, prosecco });
}
