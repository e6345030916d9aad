import fs from 'node:fs';
import { ChannelLists, ChannelWeights, DEFAULT_CHANNEL_WEIGHTS, fusedCandidates, rankMemoryHits } from '../src/graph/search-ranking';
import { recallAt, summariseRecall } from './locomo';

/**
 * Replays the fusion over channel lists dumped by `BENCH_RECALL_DUMP=file npm run bench -- recall`
 * with other channel weights, to choose them by figures without re-ingesting:
 * `node dist/bench/recall-tune.js file`. Development split only; prints Recall@10 per setting.
 */
interface Dump {
  dia: Record<string, string>;
  questions: Array<{ conversation: number; category: number; evidence: string[]; lists: ChannelLists }>;
}

export function recallWith(dump: Dump, weights: Partial<ChannelWeights>, limit = 10): { all: number; byCategory: Record<string, number> } {
  const rows = dump.questions
    .filter((q) => q.category >= 1 && q.category <= 4)
    .map((q) => {
      // As search does: only the fused candidates it re-checks against Postgres can be hits.
      const { facts, events } = fusedCandidates(q.lists, limit * 3, weights);
      const candidates = new Set([...facts, ...events].map((h) => h.id));
      const hits = rankMemoryHits(q.lists, (id) => candidates.has(id), weights).slice(0, limit);
      const sources = new Map<string, string[]>();
      for (const c of ['vector', 'keyword', 'graph'] as const) for (const h of q.lists[c]) sources.set(h.id, h.events ?? []);
      const retrieved = hits.flatMap((h) => (h.kind === 'FACT' ? (sources.get(h.id) ?? []) : [h.id])).map((id) => dump.dia[id] ?? id);
      return { category: q.category, recall: recallAt(retrieved, q.evidence) };
    });
  const s = summariseRecall(rows);
  return { all: s.recallAt10, byCategory: Object.fromEntries(Object.entries(s.byCategory).map(([k, v]) => [k, v.recallAt10])) };
}

function main(): void {
  const file = process.argv[2];
  if (!file) throw new Error('usage: recall-tune DUMP.json');
  const dump = JSON.parse(fs.readFileSync(file, 'utf8')) as Dump;
  const grid: Array<[string, Partial<ChannelWeights>]> = [['default', DEFAULT_CHANNEL_WEIGHTS]];
  for (const f of [0, 0.25, 0.5, 1])
    for (const g of [0, 0.25, 0.5, 1])
      for (const ev of [1, 1.5])
        for (const ek of [1, 1.5]) {
          grid.push([`facts ${f} graph ${g} event_vector ${ev} event_keyword ${ek}`, { vector: f, keyword: f, graph: g, event_vector: ev, event_keyword: ek }]);
        }
  const results = grid.map(([name, w]) => ({ name, ...recallWith(dump, w) })).sort((a, b) => b.all - a.all);
  for (const r of results.slice(0, 25)) process.stdout.write(`${r.all.toFixed(3)}  ${r.name}  ${JSON.stringify(r.byCategory)}\n`);
}

if (require.main === module) main();
