import path from 'node:path';
import { loadChatFixture, type LocomoConversation } from '../../bench/locomo';

/** A conversation of test/fixtures/recall (LoCoMo's shape, written for this repository), with its dates parsed. */
export function loadRecallFixture(file: string): LocomoConversation {
  return loadChatFixture(path.join(__dirname, '..', 'fixtures', 'recall', file));
}
