// Prints what `npm run codegen` would write, as JSON [{filename, content}], without writing it.
// Run with plain node (not inside jest, whose module system cannot load codegen's ESM deps).
const path = require('node:path');
const { generate } = require('@graphql-codegen/cli');
const { loadCodegenConfig } = require('@graphql-codegen/cli');

(async () => {
  const root = path.resolve(__dirname, '..', '..');
  const { config } = await loadCodegenConfig({ configFilePath: path.join(root, 'codegen.yml') });
  process.chdir(root);
  const outputs = await generate({ ...config, silent: true }, false);
  process.stdout.write(JSON.stringify(outputs.map((o) => ({ filename: path.resolve(root, o.filename), content: o.content }))));
})().catch((err) => {
  process.stderr.write(String(err && err.stack ? err.stack : err));
  process.exit(1);
});
