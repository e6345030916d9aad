import fs from 'node:fs';
import path from 'node:path';
import type { LocomoConversation, LocomoTurn } from '../../bench/locomo';

/** A conversation of test/fixtures/recall (LoCoMo's shape, written for this repository), with its dates parsed. */
export function loadRecallFixture(file: string): LocomoConversation {
  const raw = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'recall', file), 'utf8')) as Omit<LocomoConversation, 'turns'> & {
    turns: Array<Omit<LocomoTurn, 'occurredAt'> & { occurredAt: string }>;
  };
  return { ...raw, turns: raw.turns.map((t) => ({ ...t, occurredAt: new Date(t.occurredAt) })) };
}
