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
 * versioned. 3: a clause after a list of values ends the list (issue 44, item 5). 4: the judge's
 * change cues and topic words live in silver/vocabulary/change-cues.ts, topic words meet by word
 * keys (common/word-forms.ts: "coffees" meets "coffee"), and a stop's topic leaves out how and when.
 */
export const OFFLINE_RULES_VERSION = 4;
export const RULE_SOURCES_HASH = '8786bff8f90146e5e70611010250c369164205df5f907fcf027426bd6fb8f6ca';
export const OFFLINE_RULES_MODEL = `offline-rules@${OFFLINE_RULES_VERSION}`;
