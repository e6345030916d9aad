import { AuthContext } from '../access/auth-context';
import { Capability } from '../access/capability';
import { EventRepository, keyString } from './event.repository';
import { BronzeEvent, DerivationStatus, EventKind, IngestStatus, NormalizedEvent, RejectCode } from './event.types';
import { IngestService } from './ingest.service';

/** Stands in for Postgres refusing a value validation let through (SQLSTATE 22021, as pg reports it). */
class RefusingEvents {
  statements = 0;
  async insertNew(events: readonly NormalizedEvent[]): Promise<Map<string, BronzeEvent>> {
    this.statements += 1;
    if (events.some((e) => e.content.includes('refused'))) throw Object.assign(new Error('invalid byte sequence for encoding "UTF8"'), { code: '22021' });
    return new Map(
      events.map((e, i) => [
        keyString(e),
        { ...e, id: `id-${this.statements}-${i}`, ingestedAt: new Date(), derivationStatus: DerivationStatus.PENDING, destroyedAt: null },
      ]),
    );
  }
  async findByKeys(): Promise<Map<string, BronzeEvent>> {
    return new Map();
  }
}

const auth = AuthContext.of({ tokenId: 't', principalId: 'p', name: 'n', grants: [{ namespacePattern: 'ns', capabilities: [Capability.INGEST] }] });
const event = (content: string, i: number) => ({ namespace: 'ns', source: 's', sourceEventId: `e${i}`, kind: EventKind.MESSAGE, content });

describe('IngestService', () => {
  it('rejects only the rows Postgres refuses and stores the rest of the batch', async () => {
    const repo = new RefusingEvents();
    const service = new IngestService(
      repo as unknown as EventRepository,
      { now: () => new Date('2026-01-01T00:00:00Z') },
      { maxContentBytes: 1000, maxPayloadBytes: 1000, maxPayloadDepth: 8, maxBatchSize: 10 },
    );
    const results = await service.ingestBatch(auth, [event('good', 1), event('refused', 2), event('good too', 3)]);
    expect(results.map((r) => r.status)).toEqual([IngestStatus.CREATED, IngestStatus.REJECTED, IngestStatus.CREATED]);
    const bad = results[1];
    expect(bad?.status === IngestStatus.REJECTED && bad.code).toBe(RejectCode.INVALID_FIELD);
    expect(bad?.status === IngestStatus.REJECTED && bad.reason).toMatch(/Postgres cannot store this event as sent/);
  });
});
