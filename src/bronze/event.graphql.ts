import { Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import { BronzeEvent, DerivationStatus, EventKind, IngestStatus, Role } from './event.types';
import { JsonScalar } from '../common/json-scalar';

@InputType({ description: 'One raw event. (namespace, source, sourceEventId) identifies it: re-sending it is safe.' })
export class EventInput {
  @Field(() => String, { description: 'The contamination firewall: every read and write is scoped by namespace.' })
  namespace!: string;

  @Field(() => String, { description: 'Where the event comes from (a connector, an agent). With sourceEventId: the idempotency key.' })
  source!: string;

  @Field(() => String)
  sourceEventId!: string;

  @Field(() => String, { nullable: true, description: 'URI of the upstream source of truth.' })
  provenanceRoot?: string | null;

  @Field(() => EventKind)
  kind!: EventKind;

  @Field(() => String, { nullable: true })
  conversationId?: string | null;

  @Field(() => String, { nullable: true })
  sessionId?: string | null;

  @Field(() => Int, { nullable: true, description: 'Order within the conversation.' })
  sequenceNum?: number | null;

  @Field(() => Role, { nullable: true })
  role?: Role | null;

  @Field(() => String, { nullable: true })
  actor?: string | null;

  @Field(() => String, { description: 'Stored verbatim.' })
  content!: string;

  @Field(() => JsonScalar, {
    nullable: true,
    description:
      'Structured payload (tool arguments, results, metadata), stored as given: at most MAX_PAYLOAD_DEPTH levels deep. Integers beyond 2^53 are kept digit for digit over HTTP (read them back exactly from rawPayloadText); graphql-ws messages cannot carry them exactly and are refused.',
  })
  rawPayload?: unknown;

  @Field(() => Date, { nullable: true, description: 'When it happened. Default: now.' })
  occurredAt?: Date | null;
}

@ObjectType({ description: 'A raw event in Bronze: immutable, append-only, the source of every derived fact.' })
export class Event {
  @Field(() => ID) id!: string;
  @Field(() => String) namespace!: string;
  @Field(() => String) source!: string;
  @Field(() => String) sourceEventId!: string;
  @Field(() => String, { nullable: true }) provenanceRoot!: string | null;
  @Field(() => EventKind) kind!: EventKind;
  @Field(() => String, { nullable: true }) conversationId!: string | null;
  @Field(() => String, { nullable: true }) sessionId!: string | null;
  @Field(() => Int, { nullable: true }) sequenceNum!: number | null;
  @Field(() => Role, { nullable: true }) role!: Role | null;
  @Field(() => String, { nullable: true }) actor!: string | null;
  @Field(() => String, { description: 'Verbatim; an empty string once the event was destroyed (destroyedAt set).' }) content!: string;

  /** The payload, parsed (the GraphQL field is resolved in EventResolver: it needs "read"). */
  get rawPayload(): unknown {
    return this.rawPayloadText === null ? null : JSON.parse(this.rawPayloadText);
  }

  /** rawPayload exactly as stored (GraphQL field in EventResolver: it needs "read"). */
  rawPayloadText!: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'Links a TOOL_CALL to its TOOL_RESULTs (from rawPayload toolCallId / tool_call_id / call_id, or id on the call).',
  })
  toolCallId!: string | null;

  /** SHA-256 of the canonical submission (GraphQL field in EventResolver: shown as text-visibility.ts `visibleChecksum` says). */
  checksum!: string;
  /** Set on the event an ingest just created for this caller (its own submission; not a GraphQL field). */
  ownSubmission?: boolean;

  @Field(() => Date) occurredAt!: Date;
  @Field(() => Date, { description: 'Set by the server when the event was stored.' }) ingestedAt!: Date;

  @Field(() => DerivationStatus, { description: 'PENDING until Silver has derived from it; FAILED when it sits in dead letters.' })
  derivationStatus!: DerivationStatus;

  @Field(() => Date, {
    nullable: true,
    description:
      'When an approved destroyEvent erased this event (legal erasure): content is then empty, rawPayload and checksum null; id and key remain as its tombstone. Null for every other event.',
  })
  destroyedAt!: Date | null;

  static from(e: BronzeEvent): Event {
    return Object.assign(new Event(), e);
  }
}

@ObjectType({ description: 'The outcome of one submitted event, at the same index as in the input.' })
export class IngestResult {
  @Field(() => Int) index!: number;
  @Field(() => IngestStatus) status!: IngestStatus;
  @Field(() => Event, {
    nullable: true,
    description: 'The stored event: the new one (CREATED) or the original (DUPLICATE, CONFLICT), the original only when you hold "read" on its namespace.',
  })
  event!: Event | null;
  @Field(() => String, {
    nullable: true,
    description:
      'Why it was rejected: MISSING_FIELD, INVALID_FIELD, INVALID_NAMESPACE, INVALID_ENUM, INVALID_UNICODE, INVALID_TIMESTAMP, CONTENT_TOO_LARGE, PAYLOAD_TOO_LARGE, PAYLOAD_TOO_DEEP, CONFLICT, FORBIDDEN.',
  })
  code!: string | null;
  @Field(() => String, { nullable: true }) reason!: string | null;
}

@InputType({ description: 'Every given condition must hold.' })
export class EventFilter {
  @Field(() => [String], { nullable: true }) sources?: string[] | null;
  @Field(() => [EventKind], { nullable: true }) kinds?: EventKind[] | null;
  @Field(() => String, { nullable: true }) conversationId?: string | null;
  @Field(() => String, { nullable: true }) sessionId?: string | null;
  @Field(() => Date, { nullable: true, description: 'occurredAt >= from' }) from?: Date | null;
  @Field(() => Date, { nullable: true, description: 'occurredAt < to' }) to?: Date | null;
  @Field(() => String, { nullable: true, description: 'Case-insensitive substring of content.' }) contains?: string | null;
}

@ObjectType()
export class EventEdge {
  @Field(() => String) cursor!: string;
  @Field(() => Event) node!: Event;
}

@ObjectType({ description: "Where a page ends (named apart from @neo4j/graphql's generated PageInfo)." })
export class ConnectionPageInfo {
  @Field(() => Boolean) hasNextPage!: boolean;
  @Field(() => String, { nullable: true }) endCursor!: string | null;
}

@ObjectType()
export class EventConnection {
  @Field(() => [EventEdge]) edges!: EventEdge[];
  @Field(() => ConnectionPageInfo) pageInfo!: ConnectionPageInfo;
}

@ObjectType({ description: 'How far a source has been ingested into a namespace: a connector resumes from here.' })
export class Watermark {
  @Field(() => String) namespace!: string;
  @Field(() => String) source!: string;
  @Field(() => String, { description: 'sourceEventId of the latest event by occurredAt (ties: the greater sourceEventId).' }) lastSourceEventId!: string;
  @Field(() => Date) lastOccurredAt!: Date;
  @Field(() => Date) lastIngestedAt!: Date;
  @Field(() => Int, { description: 'Events created from this source (duplicates not counted).' }) eventCount!: number;
}
