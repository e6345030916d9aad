import { stringifyExact } from '../common/exact-json';
import { OCCURRED_AT_MAX, OCCURRED_AT_MIN } from '../common/limits';
import { isValidNamespace, NAMESPACE_RULE } from '../common/namespace';
import { eventChecksum } from './checksum';
import { payloadProblem } from './payload-check';
import { toolCallIdOf } from './tool-call';
import { EventKind, EventSubmission, NormalizedEvent, RejectCode, Role } from './event.types';

export interface IngestLimits {
  maxContentBytes: number;
  maxPayloadBytes: number;
  /** Window around now for occurredAt (each month is a permanent partition); unset: 1900-2199 only. */
  occurredAtMaxPastDays?: number;
  occurredAtMaxFutureDays?: number;
  /** Deepest nesting of objects and arrays in a rawPayload (MAX_PAYLOAD_DEPTH). */
  maxPayloadDepth: number;
}

export type Validation = { ok: true; event: NormalizedEvent } | { ok: false; code: RejectCode; reason: string };

// Partitions are monthly; these bounds keep typos (year 20025) out while allowing history and plans.
const MIN_TIME = OCCURRED_AT_MIN.getTime();
const MAX_TIME = OCCURRED_AT_MAX.getTime();
const KINDS = new Set<string>(Object.values(EventKind));
const ROLES = new Set<string>(Object.values(Role));
const KIND_NAMES = Object.keys(EventKind).join(', ');
const ROLE_NAMES = Object.keys(Role).join(', ');

// eslint-disable-next-line no-control-regex -- control characters are what this matches
const CONTROL = /[\u0000-\u001f\u007f]/;

const reject = (code: RejectCode, reason: string): Validation => ({ ok: false, code, reason });

function text(value: unknown, field: string, max: number, required: boolean): { value: string | null } | Validation {
  if (value === undefined || value === null) {
    return required ? reject(RejectCode.MISSING_FIELD, `${field} is required`) : { value: null };
  }
  if (typeof value !== 'string') return reject(RejectCode.INVALID_FIELD, `${field} must be a string`);
  if (!value.isWellFormed()) return reject(RejectCode.INVALID_UNICODE, `${field} is not valid Unicode (it holds an unpaired UTF-16 surrogate such as \\ud800)`);
  if (required && value.trim() === '') return reject(RejectCode.MISSING_FIELD, `${field} must not be empty`);
  if (value.length > max) return reject(RejectCode.INVALID_FIELD, `${field} is longer than ${max} characters`);
  if (CONTROL.test(value)) return reject(RejectCode.INVALID_FIELD, `${field} must not contain control characters`);
  return { value };
}

const DAY_MS = 86_400_000;

function outsideWindow(t: Date, now: Date, limits: IngestLimits): string | undefined {
  const past = limits.occurredAtMaxPastDays;
  const future = limits.occurredAtMaxFutureDays;
  if (past !== undefined && t.getTime() < now.getTime() - past * DAY_MS) {
    return `occurredAt ${t.toISOString()} is more than ${past} days before now; older events are not accepted (OCCURRED_AT_MAX_PAST_DAYS)`;
  }
  if (future !== undefined && t.getTime() > now.getTime() + future * DAY_MS) {
    return `occurredAt ${t.toISOString()} is more than ${future} day(s) after now; check the sender's clock and time zone (OCCURRED_AT_MAX_FUTURE_DAYS)`;
  }
  return undefined;
}

/** Accepts an enum's GraphQL name (MESSAGE) or stored value (message). */
function enumValue<T extends string>(value: unknown, values: Set<string>, byName: Record<string, T>): T | undefined {
  if (typeof value !== 'string') return undefined;
  if (values.has(value)) return value as T;
  return byName[value];
}

/** The payload as JSON text and the tool-call id read from it, or why the item is rejected. */
function payloadOf(
  input: EventSubmission,
  kind: EventKind,
  hasPayload: boolean,
  limits: IngestLimits,
): { rawPayloadText: string | null; toolCallId: string | null } | Validation {
  let rawPayloadText: string | null = null;
  if (hasPayload) {
    const problem = payloadProblem(input.rawPayload, limits.maxPayloadDepth);
    if (problem) return reject(problem.code, problem.reason);
    let text: string | undefined;
    try {
      text = stringifyExact(input.rawPayload);
    } catch (err) {
      return reject(RejectCode.INVALID_FIELD, `rawPayload is not serialisable JSON: ${(err as Error).message}`);
    }
    if (text === undefined) return reject(RejectCode.INVALID_FIELD, 'rawPayload is not serialisable JSON');
    rawPayloadText = text;
    const payloadBytes = Buffer.byteLength(rawPayloadText, 'utf8');
    if (payloadBytes > limits.maxPayloadBytes) {
      return reject(RejectCode.PAYLOAD_TOO_LARGE, `rawPayload is ${payloadBytes} bytes as JSON; the limit is ${limits.maxPayloadBytes} (MAX_PAYLOAD_BYTES)`);
    }
  }
  // The id is stored as text of its own: it must be storable there unchanged.
  const toolCallId = toolCallIdOf(kind, input.rawPayload);
  const where = 'the tool-call id in rawPayload (toolCallId, tool_call_id, callId, call_id or id)';
  if (toolCallId !== null && !toolCallId.isWellFormed())
    return reject(RejectCode.INVALID_UNICODE, `${where} is not valid Unicode (an unpaired UTF-16 surrogate)`);
  if (toolCallId !== null && CONTROL.test(toolCallId))
    return reject(RejectCode.INVALID_FIELD, `${where} must not contain control characters such as NUL (\\u0000)`);
  return { rawPayloadText, toolCallId };
}

/**
 * Checks one submission and normalises it (enum values, time, payload text, checksum).
 * Pure: `now` is passed in. Every rejection names the field and what would be accepted.
 */
export function validateSubmission(input: EventSubmission, limits: IngestLimits, now: Date): Validation {
  if (typeof input !== 'object' || input === null) return reject(RejectCode.INVALID_FIELD, 'an event must be an object');
  if (typeof input.namespace !== 'string' || input.namespace === '') return reject(RejectCode.MISSING_FIELD, 'namespace is required');
  if (!isValidNamespace(input.namespace)) {
    return reject(RejectCode.INVALID_NAMESPACE, `invalid namespace ${JSON.stringify(input.namespace.slice(0, 80))}: ${NAMESPACE_RULE}`);
  }
  const fields: Record<string, string | null> = {};
  for (const [field, max, required] of [
    ['source', 200, true],
    ['sourceEventId', 512, true],
    ['provenanceRoot', 2048, false],
    ['conversationId', 512, false],
    ['sessionId', 512, false],
    ['actor', 512, false],
  ] as const) {
    const r = text((input as unknown as Record<string, unknown>)[field], field, max, required);
    if ('ok' in r) return r;
    fields[field] = r.value;
  }
  if (fields.provenanceRoot !== null && !/^[A-Za-z][A-Za-z0-9+.-]*:\S+$/.test(fields.provenanceRoot as string)) {
    return reject(RejectCode.INVALID_FIELD, 'provenanceRoot must be a URI with a scheme, e.g. https://… or slack://…');
  }

  const kind = enumValue(input.kind, KINDS, EventKind as unknown as Record<string, EventKind>);
  if (input.kind === undefined || input.kind === null) return reject(RejectCode.MISSING_FIELD, `kind is required (one of ${KIND_NAMES})`);
  if (!kind) return reject(RejectCode.INVALID_ENUM, `unknown kind ${JSON.stringify(input.kind)}: use one of ${KIND_NAMES}`);
  let role: Role | null = null;
  if (input.role !== undefined && input.role !== null) {
    const r = enumValue(input.role, ROLES, Role as unknown as Record<string, Role>);
    if (!r) return reject(RejectCode.INVALID_ENUM, `unknown role ${JSON.stringify(input.role)}: use one of ${ROLE_NAMES}`);
    role = r;
  }

  const seq = input.sequenceNum;
  if (seq !== undefined && seq !== null && (!Number.isInteger(seq) || seq < 0 || seq > 2_147_483_647)) {
    return reject(RejectCode.INVALID_FIELD, 'sequenceNum must be an integer between 0 and 2147483647');
  }

  const content: unknown = input.content;
  const hasPayload = input.rawPayload !== undefined && input.rawPayload !== null;
  if (content === undefined || content === null) return reject(RejectCode.MISSING_FIELD, 'content is required');
  if (typeof content !== 'string') return reject(RejectCode.INVALID_FIELD, 'content must be a string');
  if (content === '' && !hasPayload) return reject(RejectCode.MISSING_FIELD, 'content must not be empty (or send a rawPayload with it)');
  if (content.includes('\u0000')) {
    return reject(RejectCode.INVALID_FIELD, 'content contains NUL (\\u0000) characters, which cannot be stored as text; encode binary data (e.g. base64)');
  }
  if (!content.isWellFormed())
    return reject(RejectCode.INVALID_UNICODE, 'content is not valid Unicode (it holds an unpaired UTF-16 surrogate such as \\ud800)');
  const contentBytes = Buffer.byteLength(content, 'utf8');
  if (contentBytes > limits.maxContentBytes) {
    return reject(
      RejectCode.CONTENT_TOO_LARGE,
      `content is ${contentBytes} bytes; the limit is ${limits.maxContentBytes} (MAX_CONTENT_BYTES): split it into several events`,
    );
  }

  const payload = payloadOf(input, kind, hasPayload, limits);
  if ('ok' in payload) return payload;
  const { rawPayloadText, toolCallId } = payload;

  let occurredAt = now;
  const occurredAtGiven = input.occurredAt !== undefined && input.occurredAt !== null;
  if (occurredAtGiven) {
    const t = input.occurredAt instanceof Date ? input.occurredAt : new Date(String(input.occurredAt));
    if (Number.isNaN(t.getTime())) {
      return reject(
        RejectCode.INVALID_TIMESTAMP,
        `occurredAt ${JSON.stringify(input.occurredAt)} is not a date-time; use ISO-8601 such as 2026-11-29T12:00:00Z`,
      );
    }
    if (t.getTime() < MIN_TIME || t.getTime() >= MAX_TIME) {
      return reject(RejectCode.INVALID_TIMESTAMP, `occurredAt ${t.toISOString()} is outside the accepted range 1900-01-01 to 2199-12-31`);
    }
    const outside = outsideWindow(t, now, limits);
    if (outside) return reject(RejectCode.INVALID_TIMESTAMP, outside);
    occurredAt = t;
  }

  const normalized = {
    namespace: input.namespace,
    source: fields.source as string,
    sourceEventId: fields.sourceEventId as string,
    provenanceRoot: fields.provenanceRoot,
    kind,
    conversationId: fields.conversationId,
    sessionId: fields.sessionId,
    sequenceNum: seq ?? null,
    role,
    actor: fields.actor,
    content,
    rawPayloadText,
    toolCallId,
    occurredAt,
    occurredAtGiven,
  };
  const checksum = eventChecksum({
    kind,
    content,
    rawPayload: hasPayload ? input.rawPayload : null,
    provenanceRoot: normalized.provenanceRoot,
    conversationId: normalized.conversationId,
    sessionId: normalized.sessionId,
    sequenceNum: normalized.sequenceNum,
    role,
    actor: normalized.actor,
    occurredAt: occurredAtGiven ? occurredAt.toISOString() : null,
  });
  return { ok: true, event: { ...normalized, checksum } };
}
