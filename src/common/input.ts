import { InputException, InputExceptionCode } from './app-exception';
import { UUID } from './ids';
import { OCCURRED_AT_MAX, OCCURRED_AT_MIN } from './limits';

/**
 * Why a string cannot be stored as Postgres text unchanged, or undefined when it can:
 * Postgres text cannot hold U+0000, and the pg driver encodes an unpaired UTF-16 surrogate as
 * U+FFFD, which would store a value other than the one received.
 */
export function textProblem(value: string): string | undefined {
  if (value.includes('\u0000')) return 'contains a NUL (\\u0000) character, which cannot be stored as text';
  if (!value.isWellFormed()) return 'is not valid Unicode (it holds an unpaired UTF-16 surrogate such as \\ud800)';
  return undefined;
}

/** The first string (or object key) in a value that cannot be stored unchanged, with its path. */
export function findTextProblem(value: unknown, path: string): { path: string; problem: string } | undefined {
  // A list element's path is built only when needed: a 100k-element list must stay cheap.
  const stack: Array<{ v: unknown; p: string; i?: number }> = [{ v: value, p: path }];
  while (stack.length > 0) {
    const { v, p: parent, i } = stack.pop() as (typeof stack)[number];
    if (typeof v === 'string') {
      const problem = textProblem(v);
      if (problem) return { path: i === undefined ? parent : `${parent}[${i}]`, problem };
      continue;
    }
    if (v === null || typeof v !== 'object' || v instanceof Date) continue;
    const p = i === undefined ? parent : `${parent}[${i}]`;
    if (Array.isArray(v)) {
      for (let k = v.length - 1; k >= 0; k--) stack.push({ v: v[k], p, i: k });
    } else {
      for (const [k, child] of Object.entries(v)) {
        const problem = textProblem(k);
        if (problem) return { path: `${p} (a key)`, problem };
        stack.push({ v: child, p: `${p}.${k}` });
      }
    }
  }
  return undefined;
}

/** BAD_USER_INPUT unless every string in `args` can be stored unchanged; names the argument. */
export function requireStorableArgs(args: Record<string, unknown>): void {
  for (const [name, value] of Object.entries(args)) {
    const found = findTextProblem(value, name);
    if (found) throw new InputException(InputExceptionCode.INVALID_ARGUMENT, `argument ${found.path} ${found.problem}: remove or encode it`);
  }
}

/** BAD_USER_INPUT unless `id` is a UUID (every id this API hands out is one). */
export function requireUuid(id: string, argument: string): string {
  if (!UUID.test(id)) {
    throw new InputException(
      InputExceptionCode.INVALID_ARGUMENT,
      `${argument} must be a UUID such as 0b5c7a4e-1f6d-4c1a-9a51-2f1e0c9d8b7a (got ${JSON.stringify(id.slice(0, 60))})`,
    );
  }
  return id;
}

/** LIMIT_EXCEEDED when a text argument is longer than `max` characters; names the argument and both lengths. */
export function requireWithin(value: string, argument: string, max: number): string {
  if (value.length > max) {
    throw new InputException(InputExceptionCode.TOO_LONG, `${argument} is ${value.length} characters; at most ${max} are kept: shorten it`);
  }
  return value;
}

/**
 * BAD_USER_INPUT unless `time`, a bound of a window over events' occurredAt, lies where an event's
 * occurredAt may lie (common/limits.ts); `omit` says what leaving it out does.
 */
export function requireEventTime(time: Date, argument: string, omit: string): Date {
  if (!(time >= OCCURRED_AT_MIN && time <= OCCURRED_AT_MAX)) {
    const day = (d: Date) => d.toISOString().slice(0, 10);
    throw new InputException(
      InputExceptionCode.INVALID_ARGUMENT,
      `${argument} must lie between ${day(OCCURRED_AT_MIN)} and ${day(OCCURRED_AT_MAX)}, the times an event's occurredAt may have (got ${Number.isNaN(time.getTime()) ? 'an invalid date' : time.toISOString()}): ${omit}`,
    );
  }
  return time;
}
