/**
 * The retry delay every queue here uses: `base × 2^attempts` seconds, capped. One formula for
 * jobs (JobRepository.fail), failed derivations (DeriveJob's dead letters) and outbox rows the
 * projector could not write, as a SQL interval expression over the caller's own expressions.
 */
export function retryDelaySql(attempts: string, baseSeconds: string, maxSeconds: string): string {
  return `make_interval(secs => least(${baseSeconds} * power(2, ${attempts}), ${maxSeconds}))`;
}

/** The same delay in TypeScript (for log messages). */
export function retryDelaySeconds(attempts: number, baseSeconds: number, maxSeconds: number): number {
  return Math.min(baseSeconds * 2 ** attempts, maxSeconds);
}
