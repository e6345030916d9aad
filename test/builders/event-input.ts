import { randomBytes } from 'node:crypto';

export interface EventInputData {
  namespace: string;
  source: string;
  sourceEventId: string;
  kind: string;
  content: string;
  provenanceRoot?: string;
  conversationId?: string;
  sessionId?: string;
  sequenceNum?: number;
  role?: string;
  actor?: string;
  rawPayload?: unknown;
  occurredAt?: string;
}

/** Builder for EventInput variables: `anEvent(ns).inConversation('c1', 3).saying('hi').build()`. */
export class EventInputBuilder {
  private data: EventInputData;

  constructor(namespace: string) {
    this.data = { namespace, source: 'test', sourceEventId: `evt-${randomBytes(6).toString('hex')}`, kind: 'MESSAGE', content: 'I use vim for everything' };
  }

  withKey(source: string, sourceEventId: string): this {
    Object.assign(this.data, { source, sourceEventId });
    return this;
  }
  saying(content: string): this {
    this.data.content = content;
    return this;
  }
  ofKind(kind: string): this {
    this.data.kind = kind;
    return this;
  }
  by(role: string, actor?: string): this {
    Object.assign(this.data, { role, actor });
    return this;
  }
  inConversation(conversationId: string, sequenceNum?: number): this {
    Object.assign(this.data, { conversationId, sequenceNum });
    return this;
  }
  inSession(sessionId: string): this {
    this.data.sessionId = sessionId;
    return this;
  }
  at(occurredAt: string): this {
    this.data.occurredAt = occurredAt;
    return this;
  }
  withPayload(rawPayload: unknown): this {
    this.data.rawPayload = rawPayload;
    return this;
  }
  with(over: Partial<EventInputData>): this {
    Object.assign(this.data, over);
    return this;
  }
  build(): EventInputData {
    return { ...this.data };
  }
}

export const anEvent = (namespace: string): EventInputBuilder => new EventInputBuilder(namespace);
