import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ExtractionContext, ExtractionEvent } from '../src/silver/model-ports';
import { ENTITY_TYPES, FACT_TYPES, RELATIONSHIP_TYPES } from '../src/silver/ontology';
import { applyQualityGate } from '../src/silver/quality-gate';
import { RuleExtractor } from '../src/models/offline/rule-extractor';
import { nowMs, report, round } from './harness';

/**
 * Coverage of the offline extractor on long multi-session conversations (LoCoMo dev, read from
 * ../shared/eval/locomo-dev/locomo-dev.json beside the repository, or under BENCH_EVAL_DIR (a git
 * worktree's parent has no shared/); skipped when absent, never copied into the repository). Every turn becomes one event: content `"Speaker: text"` (plus
 * ` [image: caption]` when the turn shares a photo), actor = the speaker, occurredAt = the
 * session's date. Events go to the extractor in conversation order, in batches of 100 (the
 * default DERIVE_BATCH_SIZE), and through the ontology gate (a pure function). Reported: the
 * share of turns with at least one fact after the gate, per conversation and overall, the time
 * per turn (wall clock and this process's CPU time: the machine is shared, so CPU time is the
 * steadier figure; the 1-minute load average is recorded beside it) and 20 sample statements
 * spread over the run.
 */
const ROOT = path.resolve(__dirname.includes(`${path.sep}dist${path.sep}`) ? path.join(__dirname, '..', '..') : path.join(__dirname, '..'));
const FILE = path.join(process.env.BENCH_EVAL_DIR ?? path.resolve(ROOT, '..', 'shared', 'eval'), 'locomo-dev', 'locomo-dev.json');
const CTX: ExtractionContext = { namespace: 'bench', entityTypes: ENTITY_TYPES, relationshipTypes: RELATIONSHIP_TYPES, factTypes: FACT_TYPES };
const BATCH = 100;
const SAMPLES = 20;

interface LocomoTurn {
  speaker: string;
  dia_id: string;
  text: string;
  blip_caption?: string;
}
type LocomoConversation = Record<string, string | LocomoTurn[]>;
interface LocomoSample {
  sample_id: string;
  conversation: LocomoConversation;
}

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

/** "1:56 pm on 8 May, 2023" → a UTC instant; null when the text has another shape. */
export function parseSessionDate(text: string): Date | null {
  const m = /^(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})$/i.exec(text.trim());
  if (!m) return null;
  const month = MONTHS.indexOf((m[5] as string).toLowerCase());
  if (month < 0) return null;
  const hour = (Number(m[1]) % 12) + ((m[3] as string).toLowerCase() === 'pm' ? 12 : 0);
  return new Date(Date.UTC(Number(m[6]), month, Number(m[4]), hour, Number(m[2])));
}

/** The conversation's turns as events, sessions in number order. */
function toEvents(sample: LocomoSample): ExtractionEvent[] {
  const conv = sample.conversation;
  const sessions = Object.keys(conv)
    .map((k) => /^session_(\d+)$/.exec(k))
    .filter((m): m is RegExpExecArray => m !== null && Array.isArray(conv[m[0]]))
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b);
  const events: ExtractionEvent[] = [];
  for (const n of sessions) {
    const at = parseSessionDate(String(conv[`session_${n}_date_time`] ?? ''));
    if (!at) throw new Error(`${sample.sample_id}: session ${n} has no readable date`);
    for (const turn of conv[`session_${n}`] as LocomoTurn[]) {
      const caption = turn.blip_caption ? ` [image: ${turn.blip_caption}]` : '';
      events.push({
        id: `${sample.sample_id}:${turn.dia_id}`,
        content: `${turn.speaker}: ${turn.text}${caption}`,
        kind: 'message',
        role: 'user',
        actor: turn.speaker,
        occurredAt: at,
        conversationId: sample.sample_id,
        sequenceNum: events.length,
      });
    }
  }
  return events;
}

/** `npm run bench -- extract-coverage`. */
export async function extractCoverage(): Promise<void> {
  if (!fs.existsSync(FILE)) {
    process.stdout.write(`extract-coverage skipped: LoCoMo dev not found at ${FILE}\n`);
    return;
  }
  const data = JSON.parse(fs.readFileSync(FILE, 'utf8')) as LocomoSample[];
  const extractor = new RuleExtractor();
  const conversations: Array<Record<string, unknown>> = [];
  const statements: string[] = [];
  let turns = 0,
    covered = 0,
    facts = 0,
    gateNotes = 0,
    ms = 0,
    cpuMs = 0;
  for (const sample of data) {
    const events = toEvents(sample);
    let convCovered = 0,
      convFacts = 0;
    const started = nowMs();
    const cpu = process.cpuUsage();
    for (let i = 0; i < events.length; i += BATCH) {
      const batch = events.slice(i, i + BATCH);
      const gated = applyQualityGate(await extractor.extract(batch, CTX), batch);
      gateNotes += gated.notes.length;
      const withFact = new Set(gated.result.facts.flatMap((f) => f.sources.map((s) => s.eventId)));
      convCovered += batch.filter((e) => withFact.has(e.id)).length;
      convFacts += gated.result.facts.length;
      statements.push(...gated.result.facts.map((f) => f.statement));
    }
    const elapsed = nowMs() - started;
    const used = process.cpuUsage(cpu);
    const cpuElapsed = (used.user + used.system) / 1000;
    ms += elapsed;
    cpuMs += cpuElapsed;
    turns += events.length;
    covered += convCovered;
    facts += convFacts;
    conversations.push({
      id: sample.sample_id,
      turns: events.length,
      turnsWithFact: convCovered,
      share: round(convCovered / events.length, 3),
      facts: convFacts,
      msPerTurn: round(elapsed / events.length, 2),
      cpuMsPerTurn: round(cpuElapsed / events.length, 2),
    });
  }
  const step = Math.max(1, Math.floor(statements.length / SAMPLES));
  const samples = statements.filter((_, i) => i % step === 0).slice(0, SAMPLES);
  report('extract-coverage', {
    extractor: extractor.model,
    batchSize: BATCH,
    conversations,
    overall: {
      turns,
      turnsWithFact: covered,
      share: round(covered / Math.max(1, turns), 3),
      facts,
      gateNotes,
      msPerTurn: round(ms / Math.max(1, turns), 2),
      cpuMsPerTurn: round(cpuMs / Math.max(1, turns), 2),
      eventsPerCpuSecond: round((turns * 1000) / Math.max(1, cpuMs), 1),
      loadAverage: round(os.loadavg()[0] ?? 0, 1),
    },
    samples,
  });
}
