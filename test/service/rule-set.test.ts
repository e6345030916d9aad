import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ruleSources, ruleSourcesHash } from '../../bench/rule-set';
import { OFFLINE_RULES_MODEL, OFFLINE_RULES_VERSION, RULE_SOURCES_HASH } from '../../src/models/offline/rule-set';
import { RuleExtractor } from '../../src/models/offline/rule-extractor';
import { RuleJudge } from '../../src/models/offline/rule-judge';

/**
 * Issue 44, item 6: the offline extractor's version changes when its rules or vocabulary change.
 * The sources of the rules (the import closure of the extractor and the judge, comments and layout
 * left out, with the npm packages they import at their versions) must hash to the hash recorded
 * beside the version: a change to them fails here until the version is bumped and the new hash
 * recorded (`node dist/bench/rule-set.js` prints it).
 */
describe('the offline rule set is versioned by its sources', () => {
  it('records the hash of the sources the rules are made of', () => {
    const now = ruleSourcesHash();
    if (now !== RULE_SOURCES_HASH)
      throw new Error(
        `the offline rules' sources changed (they hash to ${now}, ${OFFLINE_RULES_MODEL} recorded ${RULE_SOURCES_HASH}): ` +
          `set OFFLINE_RULES_VERSION to ${OFFLINE_RULES_VERSION + 1} and RULE_SOURCES_HASH to '${now}' in src/models/offline/rule-set.ts`,
      );
  });

  it('names the rule set on every fact and decision', () => {
    expect(new RuleExtractor().model).toBe(`offline-rules@${OFFLINE_RULES_VERSION}`);
    expect(new RuleJudge().model).toBe(OFFLINE_RULES_MODEL);
  });

  it('counts the rules, the vocabulary and the tagger as sources, and not the embedders', () => {
    const { files, packages } = ruleSources();
    expect(files).toEqual(
      expect.arrayContaining([
        'src/models/offline/rule-extractor.ts',
        'src/models/offline/general-clauses.ts',
        'src/models/offline/patterns.ts',
        'src/silver/vocabulary/gazetteer-rows.ts',
        'src/silver/vocabulary/states.ts',
        'src/silver/ontology.ts',
      ]),
    );
    expect(files.some((f) => /embedder|onnx/.test(f))).toBe(false);
    expect(packages.some((p) => p.startsWith('compromise@'))).toBe(true);
  });

  it('ignores comments and layout, and sees a changed rule', () => {
    // A copy of the repository's sources and package manifests in a temporary root.
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rule-set-'));
    try {
      const real = path.resolve(__dirname, '..', '..');
      const { files, packages } = ruleSources(real);
      for (const f of files) {
        fs.mkdirSync(path.dirname(path.join(root, f)), { recursive: true });
        fs.copyFileSync(path.join(real, f), path.join(root, f));
      }
      for (const p of packages) {
        const name = p.slice(0, p.lastIndexOf('@'));
        fs.mkdirSync(path.join(root, 'node_modules', name), { recursive: true });
        fs.copyFileSync(path.join(real, 'node_modules', name, 'package.json'), path.join(root, 'node_modules', name, 'package.json'));
      }
      const base = ruleSourcesHash(root);
      expect(base).toBe(ruleSourcesHash(real));
      const states = path.join(root, 'src/silver/vocabulary/states.ts');
      const text = fs.readFileSync(states, 'utf8');
      fs.writeFileSync(states, `// a comment\n${text.replace(/\n/g, '\n\n')}`);
      expect(ruleSourcesHash(root)).toBe(base);
      fs.writeFileSync(states, text.replace("'vegan',", "'vegan', 'fruitarian',"));
      expect(ruleSourcesHash(root)).not.toBe(base);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
