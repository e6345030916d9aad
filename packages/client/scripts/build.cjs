// Builds the package twice with plain tsc: dist/esm (ES modules) and dist/cjs (CommonJS), each
// with its .d.ts and a package.json that tells Node (and TypeScript) which format the folder holds.
// The sources import each other as `./x.ts`; tsc rewrites that to `./x.js` in the JavaScript but
// not in the declarations, so this rewrites them too (older TypeScript versions reject `.ts` there).
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const root = path.resolve(__dirname, '..');
const tsc = require.resolve('typescript/bin/tsc', { paths: [root] });
fs.rmSync(path.join(root, 'dist'), { recursive: true, force: true });
for (const [config, dir, type] of [
  ['tsconfig.json', 'esm', 'module'],
  ['tsconfig.cjs.json', 'cjs', 'commonjs'],
]) {
  try {
    execFileSync(process.execPath, [tsc, '-p', path.join(root, config)], { stdio: 'inherit' });
  } catch {
    process.exit(1); // tsc has printed the errors
  }
  fs.writeFileSync(path.join(root, 'dist', dir, 'package.json'), JSON.stringify({ type }) + '\n');
}

const declarations = (dir) =>
  fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? declarations(path.join(dir, e.name)) : e.name.endsWith('.d.ts') ? [path.join(dir, e.name)] : []));
for (const file of declarations(path.join(root, 'dist'))) {
  const text = fs.readFileSync(file, 'utf8');
  fs.writeFileSync(file, text.replace(/((?:from|import)\s*\(?\s*['"])(\.{1,2}\/[^'"]+)\.ts(['"])/g, '$1$2.js$3'));
}
