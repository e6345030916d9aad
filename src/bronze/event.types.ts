import { registerEnumType } from 'type-graphql';

/** What an event records. Stored lower-case in `bronze.events.kind`. */
export enum EventKind {
  MESSAGE = 'message',
  TOOL_CALL = 'tool_call',
  TOOL_RESULT = 'tool_result',
  NOTE = 'note',
  DOCUMENT = 'document',
  COMMIT = 'commit',
  ISSUE = 'issue',
  OTHER = 'other',
}

export enum Role {
  USER = 'user',
  ASSISTANT = 'assistant',
  SYSTEM = 'system',
  TOOL = 'tool',
}

export enum IngestStatus {
  CREATED = 'CREATED',
  DUPLICATE = 'DUPLICATE',
  REJECTED = 'REJECTED',
}

export enum DerivationStatus {
  PENDING = 'PENDING',
  DONE = 'DONE',
  FAILED = 'FAILED',
}

registerEnumType(EventKind, { name: 'EventKind' });
registerEnumType(Role, { name: 'Role' });
registerEnumType(IngestStatus, { name: 'IngestStatus' });
registerEnumType(DerivationStatus, { name: 'DerivationStatus' });

/** An event as a client submits it (GraphQL `EventInput`, or one line of a JSONL import). */
export interface EventSubmission {
  namespace: string;
  source: string;
  sourceEventId: string;
  provenanceRoot?: string | null;
  kind: EventKind | string;
  conversationId?: string | null;
  sessionId?: string | null;
  sequenceNum?: number | null;
  role?: Role | string | null;
  actor?: string | null;
  content: string;
  rawPayload?: unknown;
  occurredAt?: Date | string | null;
}

const FIELDS: Record<keyof EventSubmission, true> = {
  namespace: true,
  source: true,
  sourceEventId: true,
  provenanceRoot: true,
  kind: true,
  conversationId: true,
  sessionId: true,
  sequenceNum: true,
  role: true,
  actor: true,
  content: true,
  rawPayload: true,
  occurredAt: true,
};
/** The fields of EventInput: a JSONL line with any other is refused before it is sent. */
export const EVENT_INPUT_FIELDS: readonly string[] = Object.keys(FIELDS);

/** A validated submission, ready to store. */
export interface NormalizedEvent {
  namespace: string;
  source: string;
  sourceEventId: string;
  provenanceRoot: string | null;
  kind: EventKind;
  conversationId: string | null;
  sessionId: string | null;
  sequenceNum: number | null;
  role: Role | null;
  actor: string | null;
  content: string;
  /** The payload as JSON text, or null when none was given. */
  rawPayloadText: string | null;
  /** Links tool calls and their results (see tool-call.ts). */
  toolCallId: string | null;
  occurredAt: Date;
  occurredAtGiven: boolean;
  checksum: string;
}

/** A stored Bronze event. */
export interface BronzeEvent {
  id: string;
  namespace: string;
  source: string;
  sourceEventId: string;
  provenanceRoot: string | null;
  kind: EventKind;
  conversationId: string | null;
  sessionId: string | null;
  sequenceNum: number | null;
  role: Role | null;
  actor: string | null;
  content: string;
  rawPayloadText: string | null;
  toolCallId: string | null;
  checksum: string;
  occurredAt: Date;
  ingestedAt: Date;
  derivationStatus: DerivationStatus;
  /** Set when an approved destroyEvent erased it: content is then '' and the payload null (docs/approvals.md). */
  destroyedAt: Date | null;
}

export type IngestOutcome =
  | { index: number; status: IngestStatus.CREATED; event: BronzeEvent }
  /** `event`: the stored original, only when the caller may read it. */
  | { index: number; status: IngestStatus.DUPLICATE; event?: BronzeEvent }
  | { index: number; status: IngestStatus.REJECTED; code: RejectCode; reason: string; event?: BronzeEvent };

/** Why an item was rejected; stable strings clients may branch on. */
export enum RejectCode {
  MISSING_FIELD = 'MISSING_FIELD',
  INVALID_FIELD = 'INVALID_FIELD',
  INVALID_NAMESPACE = 'INVALID_NAMESPACE',
  INVALID_ENUM = 'INVALID_ENUM',
  /** Text with an unpaired UTF-16 surrogate: it cannot be stored as the value received. */
  INVALID_UNICODE = 'INVALID_UNICODE',
  INVALID_TIMESTAMP = 'INVALID_TIMESTAMP',
  CONTENT_TOO_LARGE = 'CONTENT_TOO_LARGE',
  PAYLOAD_TOO_LARGE = 'PAYLOAD_TOO_LARGE',
  PAYLOAD_TOO_DEEP = 'PAYLOAD_TOO_DEEP',
  CONFLICT = 'CONFLICT',
  FORBIDDEN = 'FORBIDDEN',
}
