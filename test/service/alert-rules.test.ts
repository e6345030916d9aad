import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * ops/prometheus/alerts.yml through the Prometheus project's own tool: `promtool check rules`
 * (syntax, PromQL, templates) and `promtool test rules` on alerts.test.yml (each rule fires on its
 * condition and stays quiet otherwise, on synthetic series). promtool comes from Debian's
 * `prometheus` package (.ci/run installs it). A planted defect shows that the unit tests fail when
 * a rule is wrong.
 */
const DIR = path.resolve(__dirname, '..', '..', 'ops', 'prometheus');

function promtool(args: string[], cwd: string): { code: number | null; out: string } {
  const r = spawnSync('promtool', args, { cwd, encoding: 'utf8' });
  if (r.error) throw new Error(`promtool could not run (${r.error.message}): apt-get install prometheus (.ci/run does)`);
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

describe('Prometheus alert rules (ops/prometheus/alerts.yml)', () => {
  it('pass promtool check rules', () => {
    const r = promtool(['check', 'rules', 'alerts.yml'], DIR);
    expect(r).toMatchObject({ code: 0 });
    expect(r.out).toMatch(/SUCCESS: 9 rules found/);
  });

  it('pass their unit tests (promtool test rules alerts.test.yml)', () => {
    const r = promtool(['test', 'rules', 'alerts.test.yml'], DIR);
    expect({ code: r.code, out: r.out }).toEqual({ code: 0, out: expect.stringContaining('SUCCESS') });
  });

  it.each([
    ['adding up the API and worker copies of a database gauge', 'max(medallion_derivation_lag_seconds)', 'sum(medallion_derivation_lag_seconds)'],
    [
      'counting refusals of bad input as faults',
      'medallion_graphql_operations_total{outcome="internal"}',
      'medallion_graphql_operations_total{outcome=~"internal|error"}',
    ],
    [
      'a broken chain that waits before it fires',
      'expr: max(medallion_chain_broken_namespaces) > 0\n',
      'expr: max(medallion_chain_broken_namespaces) > 0\n        for: 10m\n',
    ],
  ])('fail their unit tests when a rule is wrong: %s', (_what, from, to) => {
    const planted = fs.mkdtempSync(path.join(os.tmpdir(), 'alerts-'));
    try {
      const rules = fs.readFileSync(path.join(DIR, 'alerts.yml'), 'utf8');
      expect(rules).toContain(from);
      fs.writeFileSync(path.join(planted, 'alerts.yml'), rules.replace(from, to));
      fs.copyFileSync(path.join(DIR, 'alerts.test.yml'), path.join(planted, 'alerts.test.yml'));
      const r = promtool(['test', 'rules', 'alerts.test.yml'], planted);
      expect(r.code).not.toBe(0);
      expect(r.out).toMatch(/FAILED/);
    } finally {
      fs.rmSync(planted, { recursive: true, force: true });
    }
  });
});
