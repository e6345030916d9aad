import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * The floors of src/ (docs/architecture.md "Floors"), enforced by dependency-cruiser in
 * `npm run lint:floors`. These tests run the same command on the repository and on a small tree
 * with a planted upward import, so a rule that stopped matching (a renamed folder, a broken
 * regex) fails here and not silently in CI.
 */
const ROOT = path.resolve(__dirname, '..', '..');
const CONFIG = path.join(ROOT, '.dependency-cruiser.cjs');
const DEPCRUISE = path.join(ROOT, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');

function cruise(cwd: string, args: string[]): { code: number; out: string } {
  try {
    const out = execFileSync(process.execPath, [DEPCRUISE, 'src', '--config', CONFIG, '--output-type', 'err', ...args], {
      cwd,
      encoding: 'utf8',
      stdio: 'pipe',
    });
    return { code: 0, out };
  } catch (e) {
    const err = e as { status: number; stdout: string; stderr: string };
    return { code: err.status, out: `${err.stdout}${err.stderr}` };
  }
}

/** A tree of src/ files, each importing the paths listed for it, with the repository's tsconfig. */
function plant(files: Record<string, string[]>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'floors-'));
  fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'commonjs', strict: true } }));
  for (const [file, imports] of Object.entries(files)) {
    const full = path.join(dir, file);
    fs.mkdirSync(path.dirname(full), { recursive: true });
    const lines = imports.map((to, i) => `import { x as x${i} } from '${path.relative(path.dirname(full), path.join(dir, to)).replace(/\.ts$/, '')}';`);
    fs.writeFileSync(full, `${lines.join('\n')}\nexport const x = ${imports.map((_, i) => `x${i}`).join(' + ') || '1'};\n`);
  }
  return dir;
}

describe('floors of src/', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
  const tree = (files: Record<string, string[]>) => {
    const d = plant(files);
    dirs.push(d);
    return d;
  };

  it('the repository passes its own rule (the command CI runs)', () => {
    const { code, out } = cruise(ROOT, []);
    expect(out).not.toMatch(/error floor-/);
    expect(code).toBe(0);
  });

  it('imports downwards pass', () => {
    const d = tree({
      'src/app/main.ts': ['src/api/schema.ts', 'src/common/ids.ts'],
      'src/api/schema.ts': ['src/silver/fact.ts'],
      'src/silver/fact.ts': ['src/platform/sql.ts'],
      'src/platform/sql.ts': [],
      'src/common/ids.ts': [],
    });
    expect(cruise(d, []).code).toBe(0);
  });

  it('an import of a higher floor fails, naming the rule and both files', () => {
    const d = tree({ 'src/silver/fact.resolver.ts': ['src/api/context.ts'], 'src/api/context.ts': [] });
    const { code, out } = cruise(d, []);
    expect(code).not.toBe(0);
    expect(out).toContain('floor-silver: src/silver/fact.resolver.ts → src/api/context.ts');
  });

  it('two floors importing each other fail on the lower one', () => {
    const d = tree({ 'src/graph/projection.job.ts': ['src/gold/overlay.repository.ts'], 'src/gold/overlay.repository.ts': ['src/graph/projection.job.ts'] });
    const { code, out } = cruise(d, []);
    expect(code).not.toBe(0);
    expect(out).toContain('floor-graph: src/graph/projection.job.ts → src/gold/overlay.repository.ts');
    expect(out).not.toContain('floor-gold');
  });

  it('a folder that is no floor fails until it is given one', () => {
    const d = tree({ 'src/infra/pubsub.ts': ['src/common/ids.ts'], 'src/common/ids.ts': [] });
    const { code, out } = cruise(d, []);
    expect(code).not.toBe(0);
    expect(out).toContain('floor-unknown-folder: src/infra/pubsub.ts');
  });
});
