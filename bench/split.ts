import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * The tune / validate split of the recall benches (issue 44, item 1). Changes are tuned on *tune*
 * and kept only when *validate* moves too, so a gain that only learned the phrasings of the data in
 * hand shows as a gap between the two. The rule is fixed and written here, not chosen by which
 * items pass:
 *
 * - an item is in *validate* when the first four bytes of the SHA-256 of its id (UTF-8), read as
 *   an unsigned big-endian integer, are 0 modulo 3 (`inValidate`): about a third of the
 *   scenarios (by `id`) and of the update questions of project-updates.json (by their `question`
 *   text, as they have no id);
 * - of the LoCoMo development conversations, exactly one is held out: the one whose id has the
 *   smallest such integer (`heldOut`; conv-26 of conv-26, conv-30, conv-41);
 * - data written blind (by someone who has not read the code; `BLIND_FILES`) is validate only,
 *   whole. The benches print aggregate figures for validate and list individual misses for tune
 *   only, so a validate case is never read while tuning.
 */
export type Split = 'tune' | 'validate';

export function splitKey(id: string): number {
  return createHash('sha256').update(id, 'utf8').digest().readUInt32BE(0);
}

/** About a third of the items: those whose key is 0 modulo 3. */
export function inValidate(id: string): boolean {
  return splitKey(id) % 3 === 0;
}

export function splitOf(id: string): Split {
  return inValidate(id) ? 'validate' : 'tune';
}

/** The one id of a set that is held out: the smallest key (ties by id). */
export function heldOut(ids: readonly string[]): string | undefined {
  return [...ids].sort((a, b) => splitKey(a) - splitKey(b) || a.localeCompare(b))[0];
}

/** The repository's root, from bench/ (ts-jest, swc) or dist/bench/ (the built runner). */
export const REPO_ROOT = path.resolve(__dirname.includes(`${path.sep}dist${path.sep}`) ? path.join(__dirname, '..', '..') : path.join(__dirname, '..'));

/**
 * The blind-written validation files, copied into the repository (see each file's `about` for its
 * origin): a second messy group chat, a second update chat and a second scenario set.
 */
export const BLIND_FILES = {
  messyChat: path.join(REPO_ROOT, 'test', 'fixtures', 'recall', 'messy-chat-2.json'),
  updates: path.join(REPO_ROOT, 'test', 'fixtures', 'recall', 'updates-2.json'),
  scenarios: path.join(REPO_ROOT, 'bench', 'scenarios', 'scenarios-2.json'),
} as const;

/** The file when it is there (blind data arrives after the split code), else null. */
export function ifPresent(file: string): string | null {
  return fs.existsSync(file) ? file : null;
}

/** A tune and a validate figure with the gap between them (tune − validate). */
export function tuneValidate(tune: number, validate: number | null, digits = 3): { tune: number; validate: number | null; gap: number | null } {
  const r = (n: number) => Math.round(n * 10 ** digits) / 10 ** digits;
  return { tune: r(tune), validate: validate === null ? null : r(validate), gap: validate === null ? null : r(tune - validate) };
}
