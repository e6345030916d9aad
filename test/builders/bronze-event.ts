import { randomUUID } from 'node:crypto';
import { BronzeEvent, DerivationStatus, EventKind, Role } from '../../src/bronze/event.types';

/**
 * Builder for stored Bronze events, as derivation reads them: `anEvent().by(Role.USER, 'Caroline').saying('I use vim').at(t).build()`.
 * (test/builders/event-input.ts builds the GraphQL EventInput a client sends.)
 */
export class BronzeEventBuilder {
  private data: BronzeEvent;
  private static seq = 0;

  constructor() {
    const at = new Date('2026-01-01T09:00:00Z');
    BronzeEventBuilder.seq += 1;
    this.data = {
      id: randomUUID(),
      namespace: 'test',
      source: 'test',
      sourceEventId: `evt-${BronzeEventBuilder.seq}`,
      provenanceRoot: null,
      kind: EventKind.MESSAGE,
      conversationId: 'c1',
      sessionId: null,
      sequenceNum: BronzeEventBuilder.seq,
      role: Role.USER,
      actor: null,
      content: 'I use vim for everything',
      rawPayloadText: null,
      toolCallId: null,
      checksum: 'test',
      occurredAt: at,
      ingestedAt: at,
      derivationStatus: DerivationStatus.PENDING,
      destroyedAt: null,
    };
  }

  inNamespace(namespace: string): this {
    this.data.namespace = namespace;
    return this;
  }
  inConversation(conversationId: string, sequenceNum: number): this {
    Object.assign(this.data, { conversationId, sequenceNum });
    return this;
  }
  by(role: Role, actor: string | null = null): this {
    Object.assign(this.data, { role, actor });
    return this;
  }
  saying(content: string): this {
    this.data.content = content;
    return this;
  }
  at(t: Date | string): this {
    const d = new Date(t);
    Object.assign(this.data, { occurredAt: d, ingestedAt: d });
    return this;
  }
  build(): BronzeEvent {
    return { ...this.data };
  }
}

export const anEvent = (): BronzeEventBuilder => new BronzeEventBuilder();
