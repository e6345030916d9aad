import { randomUUID } from 'node:crypto';
import { AuthContext } from '../../access/auth-context';
import { Capability } from '../../access/capability';
import { AccessException, AccessExceptionCode } from '../../access/access.exception';
import { EventRepository } from '../../bronze/event.repository';
import { requireUuid } from '../../common/input';
import { Sql } from '../../platform/postgres/sql';
import { FactRepository } from '../../silver/fact.repository';
import { ApprovalGate } from '../../access/approval.port';
import { AppException } from '../../common/app-exception';
import { AuditLog, countOnlyAudit } from '../../platform/telemetry/audit';
import { OverlayException, OverlayExceptionCode } from './overlay.exception';
import { OverlayRepository, reprojectTarget as reproject, TextSpan } from './overlay.repository';
import { ComposeSpan } from '../../common/compose-text';
import { OverlayKindName, OverlayRecord } from './overlay.types';
import { placeSelector, textHash } from './quote-selector';
import { visibleEventContent } from '../../access/text-visibility';

/** What a caller writes (GraphQL OverlayInput): exactly one of factId / eventId. */
export interface OverlayWrite {
  readonly factId?: string | null;
  readonly eventId?: string | null;
  readonly kind: OverlayKindName;
  readonly exact: string;
  readonly prefix?: string | null;
  readonly suffix?: string | null;
  readonly start?: number | null;
  readonly body?: string | null;
  readonly reason?: string | null;
}

/** The text an overlay is placed on: a fact's Silver statement or an event's Bronze content. */
interface Target {
  readonly factId: string | null;
  readonly eventId: string | null;
  readonly namespace: string;
  readonly text: string;
}

const REVIEW_PAGE = 500;
/** Longest overlay `body` (an EDIT's replacement text or an ANNOTATION's note), in characters. */
export const MAX_OVERLAY_BODY = 10_000;
/** Longest overlay `reason`, in characters (as an approval's reason). */
export const MAX_OVERLAY_REASON = 2_000;

/**
 * Human overlays: add, revise, retract, list (docs/overlays.md). Each write is a new version in
 * `gold.overlays` and, in the same transaction, an outbox row that re-projects the fact (or
 * event) to Neo4j with its composed text and embedding, so search sees what readers see.
 * Changing another principal's overlay consumes an OVERWRITE_OVERLAY approval in that transaction.
 */
export class OverlayService {
  constructor(
    private readonly sql: Sql,
    private readonly overlays: OverlayRepository,
    private readonly facts: FactRepository,
    private readonly events: EventRepository,
    private readonly gate: ApprovalGate,
    /** Logs and counts each overwrite of another principal's overlay, and each refused one (platform/telemetry/audit.ts). */
    private readonly audit: AuditLog = countOnlyAudit,
  ) {}

  /** Overlays ever placed on this fact, at their latest version (needs "read"); NOT_FOUND for a fact the caller cannot read. */
  async forFact(auth: AuthContext, factId: string): Promise<OverlayRecord[]> {
    auth.requirePrincipal();
    const fact = (await this.facts.factsByIds([requireUuid(factId, 'factId')]))[0];
    if (!fact || !auth.can(Capability.READ, fact.namespace)) throw notFound('fact', factId);
    return (await this.overlays.onFacts([fact.id])).map((r) => r.overlay);
  }

  /** Overlays on these facts for the request's loader (Fact.overlays); the field checks grants. */
  async byFactIds(factIds: readonly string[]): Promise<Array<{ factId: string; overlay: OverlayRecord }>> {
    return this.overlays.onFacts(factIds);
  }

  /** Active redactions of these events' content, for the request's loader (Event.content). */
  async redactionsByEventIds(eventIds: readonly string[]): Promise<TextSpan[]> {
    return this.overlays.spansOnEvents(eventIds);
  }

  /**
   * An event's content as this caller sees it: verbatim for "admin" on its namespace, else with
   * its redacted spans hidden. Bronze keeps the bytes either way.
   */
  eventContent(auth: AuthContext, event: { namespace: string; content: string }, redactions: readonly ComposeSpan[]): string {
    return visibleEventContent(auth, event, redactions);
  }

  /** Overlays of a namespace waiting for a person (low-confidence re-anchoring, orphans); needs "review" or "overlay". */
  async needingReview(auth: AuthContext, namespace: string): Promise<OverlayRecord[]> {
    const p = auth.requirePrincipal();
    if (!auth.can(Capability.REVIEW, namespace) && !auth.can(Capability.OVERLAY, namespace)) {
      throw new AccessException(
        AccessExceptionCode.FORBIDDEN,
        `token "${p.name}" needs "review" or "overlay" on namespace "${namespace}" to list overlays for review`,
      );
    }
    return this.overlays.needingReview(namespace, REVIEW_PAGE);
  }

  async add(auth: AuthContext, input: OverlayWrite): Promise<OverlayRecord> {
    const principal = auth.requirePrincipal();
    checkShape(input);
    const target = await this.target(auth, input);
    auth.require(Capability.OVERLAY, target.namespace);
    const selector = placeSelector(target.text, input);
    return this.sql.transaction(async (tx) => {
      const record = await this.overlays.append(tx, {
        id: randomUUID(),
        namespace: target.namespace,
        factId: target.factId,
        eventId: target.eventId,
        author: principal.name,
        authorId: principal.principalId,
        ...placedVersion(input, target.text, selector, principal.name),
      });
      await reproject(tx, record);
      return record;
    });
  }

  /** A new version with new content (and selector) on the same fact or event. */
  async revise(auth: AuthContext, id: string, input: OverlayWrite, approvalId: string | null): Promise<OverlayRecord> {
    const principal = auth.requirePrincipal();
    checkShape(input);
    const current = await this.visibleOverlay(auth, id);
    if (current.status === 'RETRACTED') throw invalid(`overlay ${id} is retracted: add a new overlay instead of revising it`);
    if ((input.factId ?? null) !== current.factId || (input.eventId ?? null) !== current.eventId) {
      throw invalid(
        `overlay ${id} is on ${current.factId ? `fact ${current.factId}` : `event ${current.eventId}`}: a revision keeps its target (retract it and add a new one to move it)`,
      );
    }
    const target = await this.target(auth, input);
    const selector = placeSelector(target.text, input);
    return this.audited(auth, current, approvalId, () =>
      this.sql.transaction(async (tx) => {
        await this.approveIfForeign(tx, auth, current, approvalId, {
          operation: 'REVISE',
          kind: input.kind,
          ...(input.body != null ? { body: input.body } : {}),
        });
        const record = await this.overlays.append(tx, {
          ...current,
          ...placedVersion(input, target.text, selector, principal.name),
        });
        await reproject(tx, record);
        return record;
      }),
    );
  }

  /** A RETRACTED version: the overlay stays as history and stops applying everywhere. */
  async retract(auth: AuthContext, id: string, approvalId: string | null): Promise<OverlayRecord> {
    const principal = auth.requirePrincipal();
    const current = await this.visibleOverlay(auth, id);
    if (current.status === 'RETRACTED') return current;
    return this.audited(auth, current, approvalId, () =>
      this.sql.transaction(async (tx) => {
        await this.approveIfForeign(tx, auth, current, approvalId, { operation: 'RETRACT' });
        const record = await this.overlays.append(tx, { ...current, changedBy: principal.name, status: 'RETRACTED', needsReview: false });
        await reproject(tx, record);
        return record;
      }),
    );
  }

  /**
   * Runs a revision or retraction; when the overlay is another principal's (an irreversible
   * OVERWRITE_OVERLAY), logs and counts it once committed, or its refusal.
   */
  private async audited(auth: AuthContext, current: OverlayRecord, approvalId: string | null, run: () => Promise<OverlayRecord>): Promise<OverlayRecord> {
    const principal = auth.requirePrincipal();
    if (current.authorId === principal.principalId) return run();
    const record = {
      operation: 'overwrite_overlay' as const,
      principalId: principal.principalId,
      tokenId: principal.tokenId,
      approvalId,
      namespace: current.namespace,
      ids: { overlayId: current.id, fromVersion: current.version },
    };
    try {
      const written = await run();
      this.audit.irreversible({ ...record, outcome: 'executed', ids: { ...record.ids, version: written.version } });
      return written;
    } catch (err) {
      if (err instanceof AppException) this.audit.irreversible({ ...record, outcome: 'refused', code: err.code });
      throw err;
    }
  }

  private async approveIfForeign(
    tx: Sql,
    auth: AuthContext,
    current: OverlayRecord,
    approvalId: string | null,
    change: { operation: 'REVISE'; kind: string; body?: string } | { operation: 'RETRACT' },
  ): Promise<void> {
    if (current.authorId === auth.requirePrincipal().principalId) return;
    // The parameters an OVERWRITE_OVERLAY request must have named (access/approval-params.ts).
    const params = { overlayId: current.id, ...change };
    if (!approvalId) {
      throw new OverlayException(
        OverlayExceptionCode.NEEDS_APPROVAL,
        `overlay ${current.id} belongs to ${current.author}: changing it needs an approval. Call requestApproval with action OVERWRITE_OVERLAY, namespace "${current.namespace}" and params ${JSON.stringify(params)}, have another principal holding "approve" approve it, then pass its id as approvalId`,
      );
    }
    await this.gate.consume(tx, {
      approvalId: requireUuid(approvalId, 'approvalId'),
      namespace: current.namespace,
      action: 'OVERWRITE_OVERLAY',
      params,
      credential: auth.credential(),
    });
  }

  /** The overlay's latest version when the caller holds "overlay" on its namespace; NOT_FOUND when it does not exist or the caller cannot read there. */
  private async visibleOverlay(auth: AuthContext, id: string): Promise<OverlayRecord> {
    const current = (await this.overlays.latest([requireUuid(id, 'id')]))[0];
    if (!current || (!auth.can(Capability.READ, current.namespace) && !auth.can(Capability.OVERLAY, current.namespace))) throw notFound('overlay', id);
    auth.require(Capability.OVERLAY, current.namespace);
    return current;
  }

  /** The fact or event to place on. Missing and unreadable look the same (NOT_FOUND), so ids cannot probe other namespaces. */
  private async target(auth: AuthContext, input: OverlayWrite): Promise<Target> {
    const visible = (ns: string) => auth.can(Capability.READ, ns) || auth.can(Capability.OVERLAY, ns);
    if (input.factId) {
      const fact = (await this.facts.factsByIds([requireUuid(input.factId, 'input.factId')]))[0];
      if (!fact || !visible(fact.namespace)) throw notFound('fact', input.factId);
      return { factId: fact.id, eventId: null, namespace: fact.namespace, text: fact.statement };
    }
    const eventId = requireUuid(input.eventId as string, 'input.eventId');
    const event = (await this.events.findByIds([eventId]))[0];
    if (!event || !visible(event.namespace)) throw notFound('event', eventId);
    return { factId: null, eventId: event.id, namespace: event.namespace, text: event.content };
  }
}

function checkShape(input: OverlayWrite): void {
  for (const [field, value, max] of [
    ['body', input.body, MAX_OVERLAY_BODY],
    ['reason', input.reason, MAX_OVERLAY_REASON],
  ] as const) {
    if (value != null && value.length > max) {
      throw new OverlayException(
        OverlayExceptionCode.TOO_LARGE,
        `input.${field} is ${value.length} characters; at most ${max} are allowed: shorten it (an overlay ${field === 'body' ? 'replaces or annotates a span, it is not a document store' : 'reason is a short note'})`,
      );
    }
  }
  const hasFact = Boolean(input.factId);
  const hasEvent = Boolean(input.eventId);
  if (hasFact === hasEvent)
    throw invalid('give exactly one of input.factId (an overlay on a fact statement) or input.eventId (a redaction of an event content span)');
  if (hasEvent && input.kind !== 'REDACTION')
    throw invalid('on an event only REDACTION is possible (Bronze keeps the bytes; the span is hidden from readers without "admin")');
  if (input.kind === 'REDACTION' && input.body != null) throw invalid('a REDACTION has no body: leave body out (the span shows as [redacted])');
  if (input.kind !== 'REDACTION' && (input.body === null || input.body === undefined)) {
    throw invalid(`an ${input.kind} needs a body: the replacement text (EDIT) or the note (ANNOTATION)`);
  }
}

const invalid = (m: string) => new OverlayException(OverlayExceptionCode.INVALID_ARGUMENT, m);
const notFound = (what: string, id: string) =>
  new OverlayException(OverlayExceptionCode.NOT_FOUND, `${what} ${id} not found (or not readable with your grants)`);

/** What a person's add or revision writes: their content, anchored where they placed it (confidence 1, nothing to review). */
function placedVersion(input: OverlayWrite, text: string, selector: ReturnType<typeof placeSelector>, changedBy: string) {
  return {
    kind: input.kind,
    selector,
    textHash: textHash(text),
    body: input.body ?? null,
    reason: input.reason ?? null,
    changedBy,
    status: 'ANCHORED' as const,
    anchorConfidence: 1,
    needsReview: false,
  };
}
