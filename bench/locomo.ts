import fs from 'node:fs';
import path from 'node:path';
import BM25 from 'wink-bm25-text-search';
import nlp from 'wink-nlp-utils';

/**
 * The LoCoMo development split (../shared/eval/locomo-dev, CC BY-NC 4.0: evaluation only, read in
 * place, never copied into the repository), the Recall@10 measure of issue 9, and the BM25
 * baseline over the raw turns. Shared by bench/recall.ts and the recall-floor regression test.
 */

export interface LocomoTurn {
  /** Normalised dialogue id, `D<session>:<turn>` without leading zeros. */
  diaId: string;
  speaker: string;
  session: number;
  /** Position in the whole conversation, from 1. */
  sequenceNum: number;
  /** "Speaker: text", plus " [image: caption]" when the turn shares a picture. */
  content: string;
  occurredAt: Date;
}

export interface LocomoQuestion {
  question: string;
  category: number;
  /** Gold evidence turns that exist in the conversation (normalised ids). */
  evidence: string[];
  /** LoCoMo's `answer` (a string or a number; absent in category 5, which has `adversarial_answer`), as text. */
  answer: string | null;
}

export interface LocomoConversation {
  sampleId: string;
  speakers: [string, string];
  turns: LocomoTurn[];
  questions: LocomoQuestion[];
}

export const CATEGORY_NAMES: Record<number, string> = { 1: 'multi-hop', 2: 'temporal', 3: 'open-domain', 4: 'single-hop', 5: 'adversarial' };

/** Where the public evaluation sets are: EVAL_DIR, else ../shared/eval beside the repository. */
export function evalDir(): string {
  return (
    process.env.EVAL_DIR ??
    path.resolve(__dirname.includes(`${path.sep}dist${path.sep}`) ? path.join(__dirname, '..', '..') : path.join(__dirname, '..'), '..', 'shared', 'eval')
  );
}

export function locomoFile(): string {
  return path.join(evalDir(), 'locomo-dev', 'locomo-dev.json');
}

/** `D30:05` → `D30:5`; null when it is not a dialogue id. */
export function normaliseDiaId(id: string): string | null {
  const m = /^\s*D(\d+)\s*:\s*(\d+)\s*$/.exec(id);
  return m ? `D${Number(m[1])}:${Number(m[2])}` : null;
}

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

/** "1:56 pm on 8 May, 2023" → that instant in UTC. */
export function parseSessionDate(text: string): Date {
  const m = /(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})/i.exec(text);
  const month = m ? MONTHS.indexOf((m[5] as string).toLowerCase()) : -1;
  if (!m || month < 0) throw new Error(`unrecognised LoCoMo session date: ${JSON.stringify(text)}`);
  const hour = (Number(m[1]) % 12) + ((m[3] as string).toLowerCase() === 'pm' ? 12 : 0);
  return new Date(Date.UTC(Number(m[6]), month, Number(m[4]), hour, Number(m[2])));
}

interface RawTurn {
  speaker: string;
  dia_id: string;
  text: string;
  blip_caption?: string;
}

interface RawSample {
  sample_id?: string;
  conversation: Record<string, unknown> & { speaker_a: string; speaker_b: string };
  qa: Array<{ question: string; evidence?: string[]; category: number; answer?: string | number | null }>;
}

/** The conversations, or null (with the path it looked at) when the data set is absent. */
export function loadLocomo(file = locomoFile()): LocomoConversation[] | null {
  if (!fs.existsSync(file)) return null;
  const samples = JSON.parse(fs.readFileSync(file, 'utf8')) as RawSample[];
  return samples.map((s, n) => {
    const c = s.conversation;
    const sessions = Object.keys(c)
      .map((k) => /^session_(\d+)$/.exec(k))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => Number(m[1]))
      .sort((a, b) => a - b);
    const turns: LocomoTurn[] = [];
    for (const session of sessions) {
      const at = parseSessionDate(String(c[`session_${session}_date_time`]));
      for (const t of c[`session_${session}`] as RawTurn[]) {
        const diaId = normaliseDiaId(t.dia_id);
        if (!diaId) continue;
        const caption = t.blip_caption ? ` [image: ${t.blip_caption}]` : '';
        turns.push({ diaId, speaker: t.speaker, session, sequenceNum: turns.length + 1, content: `${t.speaker}: ${t.text}${caption}`, occurredAt: at });
      }
    }
    const known = new Set(turns.map((t) => t.diaId));
    const questions = s.qa
      .map((q) => ({
        question: q.question,
        category: q.category,
        answer: q.answer === undefined || q.answer === null ? null : String(q.answer),
        evidence: [
          ...new Set(
            (q.evidence ?? [])
              .flatMap((e) => e.split(';'))
              .map(normaliseDiaId)
              .filter((e): e is string => e !== null && known.has(e)),
          ),
        ],
      }))
      .filter((q) => q.evidence.length > 0);
    return { sampleId: s.sample_id ?? `conv-${n}`, speakers: [c.speaker_a, c.speaker_b], turns, questions };
  });
}

/** Recall@k of one question: |first k distinct retrieved turns ∩ gold| / |gold|. */
export function recallAt(retrieved: readonly string[], gold: readonly string[], k = 10): number {
  const top = [...new Set(retrieved)].slice(0, k);
  const want = new Set(gold);
  return top.filter((id) => want.has(id)).length / want.size;
}

export interface RecallSummary {
  questions: number;
  recallAt10: number;
  byCategory: Record<string, { questions: number; recallAt10: number }>;
}

/** Mean Recall@10 overall (over the given questions) and per category. */
export function summariseRecall(rows: ReadonlyArray<{ category: number; recall: number }>): RecallSummary {
  const mean = (xs: number[]) => (xs.length === 0 ? 0 : Math.round((xs.reduce((a, b) => a + b, 0) / xs.length) * 1000) / 1000);
  const byCategory: RecallSummary['byCategory'] = {};
  for (const cat of [...new Set(rows.map((r) => r.category))].sort()) {
    const rs = rows.filter((r) => r.category === cat).map((r) => r.recall);
    byCategory[`${cat} ${CATEGORY_NAMES[cat] ?? ''}`.trim()] = { questions: rs.length, recallAt10: mean(rs) };
  }
  return { questions: rows.length, recallAt10: mean(rows.map((r) => r.recall)), byCategory };
}

/**
 * Plain Okapi BM25 over the raw turns (wink-bm25-text-search; lowercase, tokenise, drop English
 * stop words, Porter-2 stems): the "keyword search over the agent's own log" our memory must beat.
 */
export class TurnBm25 {
  private readonly engine = BM25();

  constructor(turns: readonly LocomoTurn[]) {
    const prep = [nlp.string.lowerCase, nlp.string.tokenize0, nlp.tokens.removeWords, nlp.tokens.stem, nlp.tokens.propagateNegations];
    this.engine.defineConfig({ fldWeights: { body: 1 } });
    this.engine.definePrepTasks(prep);
    for (const t of turns) this.engine.addDoc({ body: t.content }, t.diaId);
    this.engine.consolidate();
  }

  /** The best `k` turns' dialogue ids, best first. */
  search(query: string, k = 10): string[] {
    return this.engine.search(query, k).map(([id]) => String(id));
  }
}

/** A conversation in LoCoMo's shape as this repository stores its own (test/fixtures/recall/*.json): dates as ISO strings. */
export function loadChatFixture(file: string): LocomoConversation {
  const raw = JSON.parse(fs.readFileSync(file, 'utf8')) as Omit<LocomoConversation, 'turns'> & {
    turns: Array<Omit<LocomoTurn, 'occurredAt'> & { occurredAt: string }>;
  };
  return { ...raw, turns: raw.turns.map((t) => ({ ...t, occurredAt: new Date(t.occurredAt) })) };
}
