/**
 * The floors of src/ (docs/architecture.md "Floors"): a folder imports its own floor and the
 * floors below it, never one above. `npm run lint` runs this (depcruise); a new upward import
 * fails CI with the rule's name, the importing file and the imported one.
 */
const FLOORS = ['common', 'platform', 'access', 'bronze', 'silver', 'graph', 'gold', 'models', 'scope', 'api', 'mcp', 'app'];

const floorRules = FLOORS.slice(0, -1).map((floor, i) => ({
  name: `floor-${floor}`,
  comment: `src/${floor}/ may import only ${FLOORS.slice(0, i + 1).join(', ')} (floors above it: ${FLOORS.slice(i + 1).join(', ')})`,
  severity: 'error',
  from: { path: `^src/${floor}/` },
  to: { path: `^src/(${FLOORS.slice(i + 1).join('|')})/` },
}));

module.exports = {
  forbidden: [
    ...floorRules,
    {
      name: 'floor-unknown-folder',
      comment: `every file of src/ sits in one of the floors (${FLOORS.join(', ')}): a new top-level folder needs its place in .dependency-cruiser.cjs and docs/architecture.md`,
      severity: 'error',
      from: { path: '^src/', pathNot: `^src/(${FLOORS.join('|')})/` },
      to: {},
    },
    {
      name: 'src-not-from-tests-or-benches',
      comment: 'the product never imports test/ or bench/',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(test|bench)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.spec\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.json'] },
  },
};
