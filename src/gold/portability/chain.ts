import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { eventChecksum } from '../../bronze/checksum';
import { parseJsonExact } from '../../common/exact-json';
import { CheckpointIndex } from './checkpoints';

/**
 * The per-namespace hash chain (docs/operations.md "Tamper evidence"): pure functions, so
 * the sealer, `verify --namespace` (live database) and `verify --file` (an export, no database)
 * compute exactly the same hashes.
 *
 * A link covers one record: `itemHash = sha256(JCS({v, kind, meta, parts}))`, where `meta` are the
 * record's fields that nothing ever changes and `parts` digests of the fields an approved erasure
 * may scrub (an overlay's quote and notes, a judge decision's statement, reason and candidates), taken
 * when the record was sealed and stored with the link. `hash = sha256(JCS({seq, prev, itemHash}))`.
 * An event's content is covered through its checksum (in `meta`), which the verifier recomputes
 * from the content unless the event was erased.
 */

export const CHAIN_KINDS = ['event', 'overlay', 'approval_log', 'judge_decision'] as const;
export type ChainKind = (typeof CHAIN_KINDS)[number];

/** The hash before the first link of every namespace. */
export const GENESIS = '0'.repeat(64);

/** Times are text with microseconds (`YYYY-MM-DDTHH:MM:SS.ffffffZ`) as PostgreSQL stores them, so hashes never depend on Date's milliseconds. */
export interface EventItem {
  id: string;
  namespace: string;
  source: string;
  sourceEventId: string;
  provenanceRoot: string | null;
  kind: string;
  conversationId: string | null;
  sessionId: string | null;
  sequenceNum: number | null;
  role: string | null;
  actor: string | null;
  content: string;
  rawPayloadText: string | null;
  toolCallId: string | null;
  checksum: string;
  occurredAt: string;
  ingestedAt: string;
  /** Set when an approved destroyEvent erased it (the tombstone's time); not sealed: it comes later. */
  destroyedAt: string | null;
}

export interface OverlayItem {
  id: string;
  version: number;
  namespace: string;
  factId: string | null;
  eventId: string | null;
  kind: string;
  exact: string;
  prefix: string;
  suffix: string;
  spanStart: number;
  spanEnd: number;
  textHash: string;
  body: string | null;
  reason: string | null;
  author: string;
  authorId: string;
  changedBy: string;
  status: string;
  /** `real` as PostgreSQL prints it. */
  anchorConfidence: string | null;
  needsReview: boolean;
  jobId: string | null;
  createdAt: string;
  versionAt: string;
}

export interface ApprovalLogItem {
  id: string;
  requestId: string;
  namespace: string;
  step: string;
  principalId: string;
  principalName: string;
  detail: string | null;
  at: string;
}

export interface JudgeDecisionItem {
  id: string;
  namespace: string;
  derivationRunId: string;
  factId: string | null;
  action: string;
  targetFactId: string | null;
  judgeModel: string;
  decidedAt: string;
  statement: string;
  reason: string;
  candidates: unknown[];
}

export type ChainRecord =
  | { kind: 'event'; item: EventItem }
  | { kind: 'overlay'; item: OverlayItem }
  | { kind: 'approval_log'; item: ApprovalLogItem }
  | { kind: 'judge_decision'; item: JudgeDecisionItem };

/** What the verifier needs to know beyond the record: which erasures happened (live: from the database; file: as exported). */
export interface ErasureContext {
  /** Overlay: its fact was erased or its event destroyed, so its erased form is legitimate. */
  erased?: boolean;
  /** Judge decision: the facts among its fact, target and sealed candidates that an erasure scrubbed. */
  erasedFacts?: string[];
}

export type Parts = Record<string, unknown>;

export interface ChainLink {
  namespace: string;
  seq: number;
  kind: ChainKind;
  itemId: string;
  itemHash: string;
  parts: Parts;
  prevHash: string;
  hash: string;
}

export const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

function jcs(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new Error('hash chain: value is not serialisable');
  return text;
}

const digest = (value: unknown): string => sha256(jcs(value));

export function itemIdOf(r: ChainRecord): string {
  return r.kind === 'overlay' ? `${r.item.id}:${r.item.version}` : r.item.id;
}

/** A fact id named by a judge candidate (`{id: …}`), or '' when it names none. */
function candidateId(c: unknown): string {
  const id = c !== null && typeof c === 'object' ? (c as { id?: unknown }).id : undefined;
  return typeof id === 'string' ? id : '';
}

const overlayContent = (o: OverlayItem) => ({
  exact: o.exact,
  prefix: o.prefix,
  suffix: o.suffix,
  spanEnd: o.spanEnd,
  textHash: o.textHash,
  body: o.body,
  reason: o.reason,
});

/** The fields nothing ever changes, per kind. */
function metaOf(r: ChainRecord): Record<string, unknown> {
  switch (r.kind) {
    case 'event': {
      const { content: _c, rawPayloadText: _p, destroyedAt: _d, ...meta } = r.item;
      return meta;
    }
    case 'overlay': {
      const { exact: _e, prefix: _p, suffix: _s, spanEnd: _se, textHash: _t, body: _b, reason: _r, ...meta } = r.item;
      return meta;
    }
    case 'approval_log':
      return { ...r.item };
    case 'judge_decision': {
      const { statement: _s, reason: _r, candidates: _c, ...meta } = r.item;
      return meta;
    }
  }
}

/** Digests of the erasable fields, as the sealer stores them with the link. */
export function partsOf(r: ChainRecord): Parts {
  switch (r.kind) {
    case 'overlay':
      return { content: digest(overlayContent(r.item)) };
    case 'judge_decision':
      return {
        statement: digest(r.item.statement),
        reason: digest(r.item.reason),
        candidates: r.item.candidates.map((c) => [candidateId(c), digest(c)]),
      };
    default:
      return {};
  }
}

export function itemHashOf(r: ChainRecord, parts: Parts): string {
  return digest({ v: 1, kind: r.kind, meta: metaOf(r), parts });
}

export function linkHashOf(seq: number, prev: string, itemHash: string): string {
  return digest({ seq, prev, itemHash });
}

/** Whether the event's stored fields give its checksum, with the client's time or the server-defaulted null (docs/bronze.md "The checksum"). */
export function eventChecksumMatches(e: EventItem): boolean {
  const rawPayload = e.rawPayloadText === null ? null : parseJsonExact(e.rawPayloadText);
  const base = {
    kind: e.kind,
    content: e.content,
    rawPayload,
    provenanceRoot: e.provenanceRoot,
    conversationId: e.conversationId,
    sessionId: e.sessionId,
    sequenceNum: e.sequenceNum,
    role: e.role,
    actor: e.actor,
  };
  // The client's time (milliseconds) when it sent one, null when the server defaulted it: either is the event's.
  const given = eventChecksum({ ...base, occurredAt: new Date(e.occurredAt).toISOString() });
  return given === e.checksum || eventChecksum({ ...base, occurredAt: null }) === e.checksum;
}

const ERASED_OVERLAY = (o: OverlayItem) =>
  o.exact === '[erased]' && o.prefix === '' && o.suffix === '' && o.body === null && o.reason === null && o.textHash === 'erased';

/**
 * Checks the record's erasable content against what was sealed: the reason it differs, or null.
 * An erased form is accepted only where the context says an erasure reached the record.
 */
function contentProblem(r: ChainRecord, sealed: Parts, ctx: ErasureContext): string | null {
  switch (r.kind) {
    case 'event': {
      const e = r.item;
      if (e.destroyedAt !== null) {
        return e.content === '' && e.rawPayloadText === null ? null : 'an erased event still holds content';
      }
      return eventChecksumMatches(e) ? null : 'the content does not match the event checksum';
    }
    case 'overlay': {
      const now = partsOf(r);
      if (now.content === sealed.content) return null;
      if (ERASED_OVERLAY(r.item) && ctx.erased) return null;
      return 'the overlay text differs from what was sealed';
    }
    case 'judge_decision': {
      const d = r.item;
      const now = partsOf(r);
      const erased = new Set(ctx.erasedFacts ?? []);
      const touched = (d.factId !== null && erased.has(d.factId)) || (d.targetFactId !== null && erased.has(d.targetFactId));
      const sealedCandidates = Array.isArray(sealed.candidates) ? (sealed.candidates as Array<[string, string]>) : [];
      // The reason may quote any fact the decision names: an erasure of one of them scrubs it.
      const namesErased = touched || sealedCandidates.some(([id]) => erased.has(id));
      if (now.statement !== sealed.statement && !(touched && d.statement === '[erased]')) return 'the judge statement differs from what was sealed';
      if (now.reason !== sealed.reason && !(namesErased && d.reason === '[erased]')) return 'the judge reason differs from what was sealed';
      const expected = touched && d.candidates.length === 0 ? [] : sealedCandidates.filter(([id]) => !erased.has(id));
      return jcs(now.candidates) === jcs(expected) ? null : 'the judge candidates differ from what was sealed';
    }
    case 'approval_log':
      return null;
  }
}

/** Where the chain first breaks. `position` is the link's seq; `line` its line in an export file. */
export interface BrokenLink {
  position: number;
  kind: ChainKind | 'unknown';
  id: string;
  reason: string;
  line?: number;
}

export interface VerifyResult {
  ok: boolean;
  links: number;
  head: string;
  broken: BrokenLink | null;
  /** Event links whose records Bronze retention dropped, each listed by a retention checkpoint. */
  retained: number;
  /** The retention checkpoints the walk used. */
  checkpoints: number;
}

/**
 * Walks a chain in seq order and remembers the first broken link. Feed every link with its
 * record (null when the record is gone) and erasure context.
 */
export class ChainVerifier {
  private prev = GENESIS;
  private expectedSeq = 1;
  private count = 0;
  private retained = 0;
  private firstBroken: BrokenLink | null = null;

  /** `checkpoints`: the chain's retention checkpoints (checkpoints.ts); a dropped event is missing unless one lists its link. */
  constructor(private readonly checkpoints: CheckpointIndex = new CheckpointIndex()) {}

  get broken(): BrokenLink | null {
    return this.firstBroken;
  }

  /** Checks one link; returns the problem (also kept as the first broken link when it is the first). */
  feed(link: ChainLink, record: ChainRecord | null, ctx: ErasureContext = {}, line?: number): BrokenLink | null {
    const problem = this.problem(link, record, ctx);
    this.count += 1;
    this.prev = link.hash;
    this.expectedSeq = link.seq + 1;
    if (!problem) return null;
    const broken: BrokenLink = { position: link.seq, kind: link.kind, id: link.itemId, reason: problem, ...(line !== undefined ? { line } : {}) };
    this.firstBroken ??= broken;
    return broken;
  }

  /** A failure found outside a link (a malformed line, a record without a link). */
  fail(broken: BrokenLink): void {
    this.firstBroken ??= broken;
  }

  private problem(link: ChainLink, record: ChainRecord | null, ctx: ErasureContext): string | null {
    if (link.seq !== this.expectedSeq) return `link ${link.seq} follows link ${this.expectedSeq - 1}: a link is missing or out of order`;
    if (link.prevHash !== this.prev) return 'prev does not name the hash of the link before it';
    if (linkHashOf(link.seq, link.prevHash, link.itemHash) !== link.hash) return 'the link hash does not match its seq, prev and item hash';
    const cut = this.checkpoints.cutProblem(link.seq, link.hash);
    if (cut) return cut;
    if (!record) return this.missing(link);
    if (record.kind !== link.kind || itemIdOf(record) !== link.itemId)
      return `the record is ${record.kind} ${itemIdOf(record)}, the link names ${link.kind} ${link.itemId}`;
    const content = contentProblem(record, link.parts, ctx);
    if (content) return content;
    if (itemHashOf(record, link.parts) !== link.itemHash) return `the ${link.kind}'s fields differ from what was sealed`;
    return null;
  }

  /** A link without its record: accepted only for an event a retention checkpoint with a valid signature lists. */
  private missing(link: ChainLink): string | null {
    const cp = link.kind === 'event' ? this.checkpoints.covering(link.seq) : undefined;
    if (!cp) return `the ${link.kind} ${link.itemId} is missing`;
    if (cp.signatureValid === false) return `the event ${link.itemId} is missing; retention checkpoint ${cp.id} lists it, but its signature does not verify`;
    this.retained += 1;
    return null;
  }

  result(): VerifyResult {
    // A checkpoint signed a cut the chain no longer reaches: links after the last one were removed.
    const last = this.expectedSeq - 1;
    const beyond = this.firstBroken ? undefined : this.checkpoints.beyond(last);
    if (beyond)
      this.fail({
        position: beyond.cutSeq,
        kind: 'unknown',
        id: '',
        reason: `the chain ends at link ${last}, before link ${beyond.cutSeq}, the cut retention checkpoint ${beyond.id} signed`,
      });
    return {
      ok: this.firstBroken === null,
      links: this.count,
      head: this.prev,
      broken: this.firstBroken,
      retained: this.retained,
      checkpoints: this.checkpoints.all.length,
    };
  }
}

/** One line of the verify output for people. */
export function describeVerify(r: VerifyResult, what: string): string {
  const retained = r.checkpoints > 0 ? ` (${r.retained} event(s) dropped by Bronze retention, listed by ${r.checkpoints} retention checkpoint(s))` : '';
  if (r.ok) return `${what}: chain intact, ${r.links} link(s)${retained}, head ${r.head}`;
  const b = r.broken as BrokenLink;
  if (b.position < 0) return `${what}: chain BROKEN at line ${b.line ?? '?'}: the line is malformed (${b.reason})`;
  return `${what}: chain BROKEN at position ${b.position}${b.line !== undefined ? ` (line ${b.line})` : ''}: ${b.kind} ${b.id}: ${b.reason}`;
}
