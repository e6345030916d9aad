import fs from 'node:fs';
import path from 'node:path';
import type { LRParser } from '@lezer/lr';
import { Client } from 'pg';
import { parseExposition, Sample, Scrape } from '../test/support/prometheus';
import { report, round, withBenchStores } from './harness';

// The Prometheus project's PromQL grammar; typed for its ES module build, loaded as CommonJS here.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { parser } = require('@prometheus-io/lezer-promql') as { parser: LRParser };
type SyntaxNode = ReturnType<LRParser['parse']>['topNode'];

const DASHBOARD = path.resolve(
  __dirname.includes(`${path.sep}dist${path.sep}`) ? path.join(__dirname, '..', '..') : path.join(__dirname, '..'),
  'ops',
  'grafana',
  'medallion.json',
);
const NS = 'bench-dashboard';

type Series = { labels: Record<string, string>; value: number };

/**
 * Evaluates the dashboard's expressions against two scrapes of a running service `seconds` apart:
 * a bare selector reads the second scrape; rate() and increase() take the difference between the
 * two (whatever their window), sum [by] adds, max [by] takes the largest (the gauges every process
 * reads from the database), histogram_quantile interpolates like Prometheus.
 * Only the forms the dashboard uses; anything else throws, so a new form is noticed.
 */
function evaluate(expr: string, first: Scrape, second: Scrape, seconds: number): Series[] {
  const text = (n: SyntaxNode): string => expr.slice(n.from, n.to);
  const children = (n: SyntaxNode): SyntaxNode[] => {
    const out: SyntaxNode[] = [];
    for (let c = n.firstChild; c; c = c.nextSibling) out.push(c);
    return out;
  };
  const select = (sel: SyntaxNode, s: Scrape): Sample[] => {
    const name = text(sel.getChild('Identifier') as SyntaxNode);
    const matchers = (sel.getChild('LabelMatchers')?.getChildren('UnquotedLabelMatcher') ?? []).map((m) => ({
      label: text(m.getChild('LabelName') as SyntaxNode),
      op: text(m.getChild('MatchOp') as SyntaxNode),
      value: JSON.parse(text(m.getChild('StringLiteral') as SyntaxNode)) as string,
    }));
    return s.samples.filter(
      (x) =>
        x.name === name &&
        matchers.every((m) => {
          const v = x.labels[m.label] ?? '';
          if (m.op === '=') return v === m.value;
          if (m.op === '!=') return v !== m.value;
          if (m.op === '=~') return new RegExp(`^(?:${m.value})$`).test(v);
          throw new Error(`matcher ${m.op} is not evaluated here`);
        }),
    );
  };
  const key = (labels: Record<string, string>): string => JSON.stringify(Object.entries(labels).sort());
  const ev = (n: SyntaxNode): Series[] | number => {
    switch (n.name) {
      case 'PromQL':
        return ev(children(n)[0] as SyntaxNode);
      case 'NumberDurationLiteral':
        return Number(text(n));
      case 'VectorSelector':
        return select(n, second).map((x) => ({ labels: x.labels, value: x.value }));
      case 'FunctionCall': {
        const fn = text(n.getChild('FunctionIdentifier') as SyntaxNode);
        const args = children(n.getChild('FunctionCallBody') as SyntaxNode);
        if (fn === 'rate' || fn === 'increase') {
          const sel = (args[0] as SyntaxNode).getChild('VectorSelector') as SyntaxNode;
          const before = new Map(select(sel, first).map((x) => [key(x.labels), x.value]));
          return select(sel, second).map((x) => {
            const d = Math.max(0, x.value - (before.get(key(x.labels)) ?? 0));
            return { labels: x.labels, value: fn === 'rate' ? d / seconds : d };
          });
        }
        if (fn === 'histogram_quantile') {
          const q = ev(args[0] as SyntaxNode) as number;
          const buckets = ev(args[1] as SyntaxNode) as Series[];
          const groups = new Map<string, { labels: Record<string, string>; b: Array<{ le: number; c: number }> }>();
          for (const s of buckets) {
            const { le, ...rest } = s.labels;
            const g = groups.get(key(rest)) ?? { labels: rest, b: [] };
            g.b.push({ le: le === '+Inf' ? Infinity : Number(le), c: s.value });
            groups.set(key(rest), g);
          }
          return [...groups.values()].flatMap(({ labels, b }) => {
            b.sort((x, y) => x.le - y.le);
            const total = b[b.length - 1]?.c ?? 0;
            // Prometheus answers NaN for a series with no observations (a job kind that has not run yet): shown, without a value.
            if (total === 0) return [{ labels, value: NaN }];
            const rank = q * total;
            const i = b.findIndex((x) => x.c >= rank);
            const hi = b[i] as { le: number; c: number };
            const lo = i > 0 ? (b[i - 1] as { le: number; c: number }) : { le: 0, c: 0 };
            if (hi.le === Infinity) return [{ labels, value: lo.le }];
            return [{ labels, value: lo.le + ((hi.le - lo.le) * (rank - lo.c)) / Math.max(hi.c - lo.c, 1e-9) }];
          });
        }
        throw new Error(`function ${fn} is not evaluated here`);
      }
      case 'AggregateExpr': {
        const op = text(n.getChild('AggregateOp') as SyntaxNode);
        if (op !== 'sum' && op !== 'max') throw new Error('only sum and max are evaluated here');
        const by = (n.getChild('AggregateModifier')?.getChild('GroupingLabels')?.getChildren('LabelName') ?? []).map(text);
        const inner = ev(children(n.getChild('FunctionCallBody') as SyntaxNode)[0] as SyntaxNode) as Series[];
        const out = new Map<string, Series>();
        for (const s of inner) {
          const labels = Object.fromEntries(by.filter((l) => s.labels[l] !== undefined).map((l) => [l, s.labels[l] as string]));
          const o = out.get(key(labels));
          if (!o) out.set(key(labels), { labels, value: s.value });
          else o.value = op === 'sum' ? o.value + s.value : Math.max(o.value, s.value);
        }
        return [...out.values()];
      }
      default:
        throw new Error(`${n.name} is not evaluated here`);
    }
  };
  const result = ev(parser.parse(expr).topNode);
  return typeof result === 'number' ? [{ labels: {}, value: result }] : result;
}

const legend = (format: string, labels: Record<string, string>): string => format.replace(/\{\{(\w+)\}\}/g, (_, l: string) => labels[l] ?? '');

/**
 * "The dashboard rendered" without Grafana or Prometheus: a service under a little load (ingest,
 * derivation, searches, a promotion, a refused request), scraped at the start and the end of it,
 * and every panel's queries evaluated on the two scrapes (`evaluate`). Writes each panel's series.
 */
export async function dashboardBench(): Promise<void> {
  const dashboard = JSON.parse(fs.readFileSync(DASHBOARD, 'utf8')) as {
    panels: Array<{ title: string; type: string; targets?: Array<{ expr: string; legendFormat: string }> }>;
  };
  await withBenchStores(async (b) => {
    const env = await b.startApp({ DERIVE_MAX_WAIT_MS: '0', GOLD_PROMOTE_SETTLE_SECONDS: '0' }, { api: true, worker: true });
    try {
      const post = async (query: string, variables: Record<string, unknown> = {}, token = b.adminToken): Promise<{ data?: Record<string, unknown> }> =>
        (await fetch(`${env.url}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: JSON.stringify({ query, variables }),
        }).then((r) => r.json())) as { data?: Record<string, unknown> };
      const scrape = async (): Promise<Scrape> => parseExposition(await (await fetch(`${env.url}/metrics`)).text());
      const first = await scrape();
      const t0 = Date.now();
      const topics = ['editor', 'city', 'job', 'sister', 'bike'];
      for (let i = 0; i < 100; i += 25)
        await post(`mutation Remember($input: [EventInput!]!) { ingestEvents(input: $input) { status } }`, {
          input: Array.from({ length: 25 }, (_, j) => ({
            namespace: NS,
            source: 'bench',
            sourceEventId: `e${i + j}`,
            kind: 'MESSAGE',
            role: 'USER',
            actor: 'user',
            conversationId: `c${Math.floor((i + j) / 10)}`,
            sequenceNum: (i + j) % 10,
            content: `My ${topics[(i + j) % 5]} is called Alex ${i + j}; I moved to Lisbon with my sister Maya last spring.`,
          })),
        });
      const pg = new Client({ connectionString: b.stores.postgresUrl });
      await pg.connect();
      try {
        for (;;) {
          const { rows } = await pg.query<{ n: number }>(
            `SELECT (SELECT count(*) FROM ops.derivation_queue WHERE status = 'pending')::int + (SELECT count(*) FROM ops.outbox WHERE processed_at IS NULL)::int AS n`,
          );
          if (rows[0]?.n === 0) break;
          await new Promise((r) => setTimeout(r, 200));
        }
      } finally {
        await pg.end();
      }
      for (let i = 0; i < 40; i++)
        await post(`query Recall($ns: String!, $q: String!) { searchMemory(namespace: $ns, query: $q) { kind } }`, {
          ns: NS,
          q: `where does my ${topics[i % 5]} live?`,
        });
      await post(`query { pipelineStatus(namespace: "${NS}") { pending } }`);
      await post(`mutation Promote { promote(namespace: "${NS}", reason: "dashboard bench") { id } }`);
      await new Promise((r) => setTimeout(r, 3_000));
      await post(`query { __typename }`, {}, 'not-a-token');
      const second = await scrape();
      const seconds = (Date.now() - t0) / 1000;

      const panels = dashboard.panels
        .filter((p) => p.type !== 'row')
        .map((p) => ({
          panel: p.title,
          queries: (p.targets ?? []).map((t) => ({
            expr: t.expr,
            series: Object.fromEntries(evaluate(t.expr, first, second, seconds).map((s) => [legend(t.legendFormat, s.labels) || '(value)', round(s.value, 4)])),
          })),
        }));
      // A value, not only a series: a p95 of a job kind that never ran is a series without one (null here, NaN in Prometheus).
      const withData = panels.filter((p) => p.queries.some((q) => Object.values(q.series).some((v) => Number.isFinite(v)))).length;
      report('dashboard', {
        what: 'every panel of ops/grafana/medallion.json evaluated on two /metrics scrapes of a running service (start and end of the load); rate() = difference / seconds between them',
        load: '100 events ingested and derived, 40 searches, pipelineStatus, a promotion, an unauthenticated request',
        seconds: round(seconds, 1),
        panels: panels.length,
        panelsWithData: withData,
        values: panels,
      });
    } finally {
      await env.app.stop();
    }
  });
}
