import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { PromotionRepository } from '../src/gold/promotion/promotion.repository';
import { PromotionService } from '../src/gold/promotion/promotion.service';
import { offlineEntityJudge } from '../src/gold/promotion/resolution-rules';
import { HashingEmbedder } from '../src/models/offline/hashing-embedder';
import { Sql } from '../src/platform/postgres/sql';
import { nameKey } from '../src/silver/candidate.repository';
import { report, round, withBenchStores } from './harness';
import { evalDir } from './locomo';

/**
 * Merge precision/recall of entity resolution on the character-identification corpus (Emory
 * NLP, Apache-2.0; ../shared/eval/character-identification): every named mention of a character
 * (a capitalised span with one character label; pronouns and collective labels left out) becomes
 * a Silver entity mention in a namespace per episode, with the scene as its context. Mentions with
 * the same normalised name are one Silver entity (as Silver stores them); the promotion service
 * then resolves the entities with its real SQL (pg_trgm), embedder (hashing) and offline judge.
 * Scored on mentions: pairwise precision/recall/F1 within each episode, and B-cubed; and on
 * Silver entities (each labelled with its mentions' majority character), which isolates what
 * resolution adds beyond Silver's exact-name grouping.
 */
const DATA = (): string => path.join(evalDir(), 'character-identification', 'character-identification-dev.json');
const PRONOUNS = new Set([
  'i',
  'you',
  'he',
  'she',
  'it',
  'we',
  'they',
  'me',
  'him',
  'her',
  'us',
  'them',
  'my',
  'your',
  'his',
  'our',
  'their',
  'mine',
  'yours',
  'hers',
  'ours',
  'theirs',
  'myself',
  'yourself',
  'himself',
  'herself',
  'y',
  'ya',
]);

interface Mention {
  episode: string;
  scene: string;
  surface: string;
  label: string;
}

interface Corpus {
  episodes: Array<{
    episode_id: string;
    scenes: Array<{ scene_id: string; utterances: Array<{ tokens: string[][]; character_entities: Array<Array<Array<string | number>>> }> }>;
  }>;
}

function mentionsOf(file: string): Mention[] {
  const corpus = JSON.parse(fs.readFileSync(file, 'utf8')) as Corpus;
  const out: Mention[] = [];
  for (const ep of corpus.episodes) {
    for (const scene of ep.scenes) {
      for (const u of scene.utterances) {
        u.character_entities.forEach((sentence, si) => {
          for (const m of sentence) {
            const [start, end, ...labels] = m as [number, number, ...string[]];
            if (labels.length !== 1 || (labels[0] as string).startsWith('#')) continue;
            const surface = (u.tokens[si] ?? []).slice(start, end).join(' ').replace(/ \. /g, '. ').trim();
            if (!/^[A-Z]/.test(surface) || PRONOUNS.has(surface.toLowerCase())) continue;
            out.push({ episode: ep.episode_id, scene: scene.scene_id, surface, label: labels[0] as string });
          }
        });
      }
    }
  }
  return out;
}

interface Scores {
  precision: number;
  recall: number;
  f1: number;
}
const f1 = (p: number, r: number) => (p + r === 0 ? 0 : (2 * p * r) / (p + r));

/** Pairwise and B-cubed scores of a clustering of items against their labels (items grouped per episode). */
function score(items: Array<{ group: string; cluster: string; label: string; weight: number }>): { pairwise: Scores; bcubed: Scores } {
  let tp = 0;
  let predicted = 0;
  let actual = 0;
  let bp = 0;
  let br = 0;
  let n = 0;
  const byGroup = new Map<string, typeof items>();
  for (const it of items) byGroup.set(it.group, [...(byGroup.get(it.group) ?? []), it]);
  for (const g of byGroup.values()) {
    // Weighted items (a Silver entity of w mentions stands for w mentions): pairs of mentions.
    const cluster = new Map<string, number>();
    const label = new Map<string, number>();
    const both = new Map<string, number>();
    for (const it of g) {
      cluster.set(it.cluster, (cluster.get(it.cluster) ?? 0) + it.weight);
      label.set(it.label, (label.get(it.label) ?? 0) + it.weight);
      const k = `${it.cluster}\u0000${it.label}`;
      both.set(k, (both.get(k) ?? 0) + it.weight);
    }
    const pairs = (m: Map<string, number>) => [...m.values()].reduce((s, c) => s + (c * (c - 1)) / 2, 0);
    tp += pairs(both);
    predicted += pairs(cluster);
    actual += pairs(label);
    for (const it of g) {
      const same = both.get(`${it.cluster}\u0000${it.label}`) as number;
      bp += it.weight * (same / (cluster.get(it.cluster) as number));
      br += it.weight * (same / (label.get(it.label) as number));
      n += it.weight;
    }
  }
  const p = predicted === 0 ? 1 : tp / predicted;
  const r = actual === 0 ? 1 : tp / actual;
  return {
    pairwise: { precision: round(p, 3), recall: round(r, 3), f1: round(f1(p, r), 3) },
    bcubed: { precision: round(bp / n, 3), recall: round(br / n, 3), f1: round(f1(bp / n, br / n), 3) },
  };
}

export async function entityResolutionBench(): Promise<void> {
  const mentions = mentionsOf(DATA());
  await withBenchStores(async (b) => {
    const env = await b.startApp({ GOLD_PROMOTE_EVERY_SECONDS: '0', OFFLINE_EMBEDDER: 'hashing' }, { api: false, worker: false });
    const owner = new Client({ connectionString: b.stores.postgresUrl });
    await owner.connect();
    try {
      const sql = Sql.of(env.app.ds);
      const cfg = env.app.config.gold;
      const promotion = new PromotionService(
        sql,
        new PromotionRepository(sql),
        { ...cfg, minConfidence: 0, minSources: 1, fallbackType: 'concept' },
        offlineEntityJudge,
        async () => new HashingEmbedder(),
      );
      const episodes = [...new Set(mentions.map((m) => m.episode))];
      const silverOf = new Map<string, string>(); // episode|nameKey -> silver id
      const t0 = Date.now();
      for (const ep of episodes) {
        const ns = `chid-${ep}`;
        const own = mentions.filter((m) => m.episode === ep);
        const run = randomUUID();
        await owner.query(
          `INSERT INTO silver.derivation_runs (id, namespace, kind, extraction_model, judge_model, embedding_model, worker_id, event_count) VALUES ($1, $2, 'incremental', 'chid', 'chid', 'chid', 'bench', 0)`,
          [run, ns],
        );
        const sceneEvent = new Map<string, string>();
        const rows: Array<{ id: string; name: string; key: string; fact: string; event: string; i: number }> = [];
        own.forEach((m, i) => {
          const key = nameKey(m.surface);
          const sk = `${ep}|${key}`;
          if (!silverOf.has(sk)) silverOf.set(sk, randomUUID());
          if (!sceneEvent.has(m.scene)) sceneEvent.set(m.scene, randomUUID());
          rows.push({ id: silverOf.get(sk) as string, name: m.surface, key, fact: randomUUID(), event: sceneEvent.get(m.scene) as string, i });
        });
        const firstOf = new Map<string, (typeof rows)[number]>();
        for (const r of rows) if (!firstOf.has(r.id)) firstOf.set(r.id, r);
        await owner.query(
          `INSERT INTO silver.entities (id, namespace, type, name, name_key, derivation_run_id, recorded_at)
           SELECT x.id, $1, 'person', x.name, x.key, $2, '2026-01-01'::timestamptz + make_interval(secs => x.i) FROM jsonb_to_recordset($3::jsonb) AS x(id uuid, name text, key text, i int)`,
          [ns, run, JSON.stringify([...firstOf.values()])],
        );
        await owner.query(
          `INSERT INTO silver.facts (id, namespace, statement, fact_type, subject_entity_id, confidence, importance, valid_from, extraction_model, derivation_run_id)
           SELECT x.fact, $1, 'mention', 'other', x.id, 0.9, 0.5, now(), 'chid', $2 FROM jsonb_to_recordset($3::jsonb) AS x(fact uuid, id uuid)`,
          [ns, run, JSON.stringify(rows)],
        );
        await owner.query(
          `INSERT INTO silver.fact_sources (fact_id, event_id) SELECT x.fact, x.event FROM jsonb_to_recordset($1::jsonb) AS x(fact uuid, event uuid)`,
          [JSON.stringify(rows)],
        );
        await promotion.promote(ns);
      }
      const ms = Date.now() - t0;
      const { rows: members } = await owner.query<{ silver: string; gold: string }>(
        `SELECT silver_entity_id::text AS silver, gold_entity_id::text AS gold FROM gold.entity_members WHERE removed_at IS NULL AND namespace LIKE 'chid-%'`,
      );
      const goldOf = new Map(members.map((m) => [m.silver, m.gold]));
      const { rows: steps } = await owner.query<{ step: string; n: number }>(
        `SELECT step, count(*)::int AS n FROM gold.promotion_log WHERE namespace LIKE 'chid-%' AND action IN ('create', 'merge') GROUP BY step ORDER BY step`,
      );
      const mentionItems = mentions.map((m) => {
        const silver = silverOf.get(`${m.episode}|${nameKey(m.surface)}`) as string;
        return { group: m.episode, label: m.label, silver, cluster: goldOf.get(silver) ?? silver, weight: 1 };
      });
      // Silver entities labelled by their mentions' majority character.
      const bySilver = new Map<string, { group: string; labels: Map<string, number>; cluster: string }>();
      for (const it of mentionItems) {
        const e = bySilver.get(it.silver) ?? { group: it.group, labels: new Map(), cluster: it.cluster };
        e.labels.set(it.label, (e.labels.get(it.label) ?? 0) + 1);
        bySilver.set(it.silver, e);
      }
      const entityItems = [...bySilver.values()].map((e) => ({
        group: e.group,
        cluster: e.cluster,
        label: [...e.labels.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]?.[0] as string,
        weight: 1,
      }));
      // Baseline: Silver alone (every entity its own cluster).
      const silverOnly = mentionItems.map((it) => ({ ...it, cluster: it.silver }));
      report('entity-resolution', {
        corpus: 'character-identification-dev (Emory NLP, Apache-2.0)',
        episodes: episodes.length,
        namedMentions: mentions.length,
        silverEntities: bySilver.size,
        goldEntities: new Set(members.map((m) => m.gold)).size,
        characters: new Set(mentions.map((m) => `${m.episode}|${m.label}`)).size,
        settings: {
          candidateTrigram: cfg.candidateTrigram,
          mergeTrigram: cfg.mergeTrigram,
          mergeCosine: cfg.mergeCosine,
          embedder: 'hashing',
          judge: offlineEntityJudge.model,
        },
        steps: Object.fromEntries(steps.map((s) => [s.step, s.n])),
        mentions: score(mentionItems),
        silverEntitiesScored: score(entityItems),
        baselineSilverOnly: score(silverOnly),
        promoteMs: ms,
      });
    } finally {
      await owner.end();
      await env.app.stop();
    }
  });
}
