import { BatchDecision, settleBatchTargets } from './batch-targets';

const d = (id: string, action: BatchDecision['action'], targetId: string | null = null): BatchDecision => ({ id, action, targetId, reason: 'r' });
const targets = (ds: BatchDecision[]) => settleBatchTargets(ds).map((x) => `${x.id}:${x.action}:${x.targetId ?? '-'}`);

describe('settleBatchTargets', () => {
  it('sends a decision that names a skipped fact of the batch to the fact that skip names', () => {
    expect(targets([d('a', 'ADD'), d('b', 'SKIP', 'a'), d('c', 'SKIP', 'b'), d('e', 'SUPERSEDE', 'c'), d('f', 'UPDATE', 'b')])).toEqual([
      'a:ADD:-',
      'b:SKIP:a',
      'c:SKIP:a',
      'e:SUPERSEDE:a',
      'f:UPDATE:a',
    ]);
  });

  it('sends a decision that names a fact updated earlier in the batch to its replacement', () => {
    // x is stored; b says it better; c repeats x; e says it better again.
    expect(targets([d('b', 'UPDATE', 'x'), d('c', 'SKIP', 'x'), d('e', 'UPDATE', 'x'), d('g', 'SKIP', 'c')])).toEqual([
      'b:UPDATE:x',
      'c:SKIP:b',
      'e:UPDATE:b',
      'g:SKIP:e',
    ]);
  });

  it('leaves stored targets, ADDs and supersessions of stored facts as they are, and says why it moved one', () => {
    const out = settleBatchTargets([d('a', 'SKIP', 'x'), d('b', 'SUPERSEDE', 'y'), d('c', 'ADD'), d('e', 'SKIP', 'a')]);
    expect(out.slice(0, 3)).toEqual([d('a', 'SKIP', 'x'), d('b', 'SUPERSEDE', 'y'), d('c', 'ADD')]);
    expect(out[3]).toEqual({ id: 'e', action: 'SKIP', targetId: 'x', reason: 'r (applied to x, which stands for a in this batch)' });
  });
});
