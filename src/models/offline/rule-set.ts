/**
 * Which offline rule set made a fact (issue 44, item 6). Every fact the offline extractor writes
 * and every decision of the offline judge records `OFFLINE_RULES_MODEL` ("offline-rules@<version>"),
 * so a rebuild can select the facts of an older rule set and a bench run names the rule set it
 * measured. The version is explicit; `RULE_SOURCES_HASH` is the SHA-256 of the sources the rules
 * are made of (the import closure of rule-extractor.ts and rule-judge.ts inside src/, comments and
 * layout left out, plus the versions of the npm packages they import: bench/rule-set.ts), and
 * test/service/rule-set.test.ts fails when the sources no longer hash to it: a change to a rule or
 * to the vocabulary must bump the version (and record the new hash) in the same commit.
 *
 * 1: every rule set until session 23 (36 rule changes under one name). 2: the same rules, first
 * versioned. 3: a clause after a list of values ends the list (issue 44, item 5). 4: a change
 * statement's subject name is no topic word it shares with an older fact (issue 43). 5: a fact
 * merges with the same fact of its own event only, and rule 2 of the judge SKIPs no fact whose
 * object names what the candidate's does not (issue 43, Silver independent of batching); its change
 * cues live in src/common/change-cues.ts, shared with search (the same words, moved before 5 landed).
 * 7: the judge compares topics by the keyword channels' word keys (Porter2: "coffees" meets
 * "coffee"), and intensifiers ("completely", "totally") name no topic (issue 44, items 2 and 4).
 * (6 named a judge change of a branch that was reverted and never landed: docs/silver.md.)
 * 8: the rules of 7; a word's key is remembered once computed (a speed change in their sources:
 * the same keys, src/common/word-forms.spec.ts, so the same facts).
 */
export const OFFLINE_RULES_VERSION = 8;
export const RULE_SOURCES_HASH = 'b510b2c5a71180fa42da1393e84d01adf4da763a3bec42d71914631c482301dd';
export const OFFLINE_RULES_MODEL = `offline-rules@${OFFLINE_RULES_VERSION}`;
