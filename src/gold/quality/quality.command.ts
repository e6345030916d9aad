import { AppConfig } from '../../common/config';
import { MemoryClient, MemoryClientError, QualityReportDocument, QualityReportQuery } from '../../../packages/client/src';
import { CliError, networkCause, resolveToken } from '../../bronze/import.command';

export interface QualityCommandOptions {
  url: string;
  namespace: string;
  token?: string;
  tokenFile?: string;
  json?: boolean;
  /** Comma-separated check names: only these. */
  checks?: string;
}

/** Exit code of `medallion quality` when at least one check failed. */
export const QUALITY_FAILED_EXIT = 2;

type Report = QualityReportQuery['qualityReport'];

const fmt = (x: number): string => (Number.isInteger(x) ? String(x) : String(Math.round(x * 1000) / 1000));

/** The report as a table: one line per check (check, ok, value, threshold), its detail last so long ones wrap alone. */
export function formatQualityTable(report: Report): string {
  const rows = report.checks.map((c) => [c.name, c.ok ? 'ok' : 'FAIL', fmt(c.value), fmt(c.threshold), c.detail]);
  const head = ['check', 'ok', 'value', 'threshold', 'detail'];
  const widths = head.slice(0, 4).map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i < 4 ? c.padEnd(widths[i]!) : c)).join('  ');
  const failed = report.checks.filter((c) => !c.ok).length;
  return [
    `quality of ${report.namespace} at ${report.generatedAt}`,
    line(head),
    line(widths.map((w) => '-'.repeat(w)).concat('-'.repeat(6))),
    ...rows.map(line),
    report.ok ? `all ${report.checks.length} checks passed` : `${failed} of ${report.checks.length} checks failed (docs/quality.md says what to do)`,
  ].join('\n');
}

/** `medallion quality --namespace NS`: prints the report of a running service; exit 0 when every check passes, 2 when one fails. */
export async function runQualityCommand(
  config: AppConfig,
  o: QualityCommandOptions,
  out: (s: string) => void = (s) => process.stdout.write(s),
): Promise<number> {
  if (!o.namespace?.trim()) throw new CliError('--namespace is required: the namespace whose quality to report');
  const token = resolveToken(config, o);
  const client = new MemoryClient({ url: o.url, token });
  let report: Report;
  try {
    const checks = o.checks
      ?.split(',')
      .map((c) => c.trim())
      .filter(Boolean);
    report = (await client.request(QualityReportDocument, { namespace: o.namespace, checks: checks?.length ? checks : null })).qualityReport;
  } catch (err) {
    const unreachable = networkCause(err);
    if (unreachable) throw new CliError(`cannot reach the service at ${o.url} (${unreachable}): start it (npm start) or pass --url`);
    const code = err instanceof MemoryClientError ? `${err.code}: ` : '';
    throw new CliError(`the service at ${o.url} refused the quality report (${code}${(err as Error).message})`);
  }
  out(`${o.json ? JSON.stringify(report, null, 2) : formatQualityTable(report)}\n`);
  return report.ok ? 0 : QUALITY_FAILED_EXIT;
}
