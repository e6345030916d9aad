import { Fact } from '../../silver/silver.types';
import { byConfidenceThenRecency } from './about.service';

const fact = (id: string, confidence: number, validFrom: string, recordedAt = '2026-01-01T00:00:00Z'): Fact =>
  ({ id, confidence, validFrom: new Date(validFrom), recordedAt: new Date(recordedAt) }) as Fact;

describe('byConfidenceThenRecency', () => {
  it('puts the most confident first, then the latest validFrom, then the latest recordedAt, then id', () => {
    const facts = [
      fact('e', 0.8, '2020-01-01T00:00:00Z'),
      fact('d', 0.9, '2020-01-01T00:00:00Z'),
      fact('c', 0.9, '2021-01-01T00:00:00Z'),
      fact('b', 0.9, '2021-01-01T00:00:00Z', '2026-02-01T00:00:00Z'),
      fact('a', 0.9, '2021-01-01T00:00:00Z', '2026-02-01T00:00:00Z'),
    ];
    expect([...facts].sort(byConfidenceThenRecency).map((f) => f.id)).toEqual(['a', 'b', 'c', 'd', 'e']);
  });
});
