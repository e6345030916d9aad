import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { OFFLINE_RULES_MODEL, OFFLINE_RULES_VERSION, RULE_SOURCES_HASH } from '../src/models/offline/rule-set';
import { REPO_ROOT } from './split';

/** The rules' entry points: what the offline extractor and judge are made of is what these import. */
export const RULE_ENTRY_POINTS = ['src/models/offline/rule-extractor.ts', 'src/models/offline/rule-judge.ts'];

/** The record of the version and hash itself, which every rule file imports: not a source of the rules. */
const RECORD = 'src/models/offline/rule-set.ts';

/** The offline rule set a bench measured ("offline-rules@2"). */
export function extractorVersion(): string {
  return OFFLINE_RULES_MODEL;
}

/** A source file without its comments and layout: a comment or a re-wrap is no new rule. */
function normalisedCode(file: string): string {
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  return ts.createPrinter({ removeComments: true }).printFile(source);
}

function resolveLocal(from: string, spec: string): string | null {
  const base = path.resolve(path.dirname(from), spec);
  for (const candidate of [`${base}.ts`, path.join(base, 'index.ts')]) if (fs.existsSync(candidate)) return candidate;
  return null;
}

/** An npm package's name as imported ("compromise", "@scope/pkg" of "@scope/pkg/sub"). */
function packageName(spec: string): string {
  const parts = spec.split('/');
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] as string);
}

/**
 * The files and packages the rules are made of: the import closure of `RULE_ENTRY_POINTS` inside
 * the repository (type-only imports too), and each npm package they import at its installed
 * version (a new compromise tags differently). Node's own modules are left out.
 */
export function ruleSources(root = REPO_ROOT): { files: string[]; packages: string[] } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const queue = RULE_ENTRY_POINTS.map((f) => path.join(root, f));
  while (queue.length > 0) {
    const file = queue.pop() as string;
    if (files.has(file)) continue;
    files.add(file);
    for (const ref of ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true).importedFiles) {
      const spec = ref.fileName;
      if (spec.startsWith('.')) {
        const local = resolveLocal(file, spec);
        if (local && path.relative(root, local) !== RECORD) queue.push(local);
      } else if (!spec.startsWith('node:')) {
        const name = packageName(spec);
        const pkg = JSON.parse(fs.readFileSync(path.join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version: string };
        packages.add(`${name}@${pkg.version}`);
      }
    }
  }
  return { files: [...files].map((f) => path.relative(root, f)).sort(), packages: [...packages].sort() };
}

/** SHA-256 over the rule sources: each file's path and normalised code, then the packages. */
export function ruleSourcesHash(root = REPO_ROOT): string {
  const { files, packages } = ruleSources(root);
  const h = createHash('sha256');
  for (const f of files) h.update(`${f}\n${normalisedCode(path.join(root, f))}\n`);
  h.update(packages.join('\n'));
  return h.digest('hex');
}

/** `node dist/bench/rule-set.js`: the recorded version and hash, and what the sources hash to now. */
if (require.main === module) {
  const now = ruleSourcesHash();
  process.stdout.write(
    `${OFFLINE_RULES_MODEL}: recorded ${RULE_SOURCES_HASH}, sources now ${now}${now === RULE_SOURCES_HASH ? ' (same)' : `: bump OFFLINE_RULES_VERSION past ${OFFLINE_RULES_VERSION} and record the new hash`}\n`,
  );
}
