import { AuthContext } from '../access/auth-context';
import { Capability } from '../access/capability';
import { AccessException, AccessExceptionCode } from '../access/access.exception';
import { BronzeException, BronzeExceptionCode } from './bronze.exception';
import { decodeCursor, encodeCursor, Position } from '../common/cursor';
import { ComposeSpan } from '../common/compose-text';
import { matchesText, visibleEventContent } from '../access/text-visibility';
import { EventListFilter, EventQueryRepository, Watermark } from './event-query.repository';
import { EventRepository } from './event.repository';
import { BronzeEvent, EventKind } from './event.types';

export interface EventPage {
  edges: Array<{ cursor: string; node: BronzeEvent }>;
  hasNextPage: boolean;
  endCursor: string | null;
}

/** The request's loader of tool calls and results by (namespace, toolCallId). */
export type ToolEventLoad = (key: { namespace: string; toolCallId: string }) => Promise<BronzeEvent[]>;

/** What linking an event to its tool call or results needs of it. */
export type LinkedEvent = Pick<BronzeEvent, 'namespace' | 'kind' | 'toolCallId'>;

export interface EventReadLimits {
  maxPageSize: number;
  maxConversationEvents: number;
}

/** Reads Bronze events on behalf of a caller; never returns what the caller's grants do not cover. */
export class EventService {
  constructor(
    private readonly events: EventRepository,
    private readonly queries: EventQueryRepository,
    private readonly limits: EventReadLimits,
    /** Active redactions of events' content (gold/overlay/overlay.repository.ts spansOnEvents). */
    private readonly redactions: (eventIds: readonly string[]) => Promise<ReadonlyArray<ComposeSpan & { targetId: string }>> = async () => [],
  ) {}

  /**
   * The event with this id, or null when it does not exist or the caller lacks `read` on its
   * namespace: both look the same, so ids cannot be used to probe other namespaces.
   */
  async getVisible(auth: AuthContext, id: string, load?: (id: string) => Promise<BronzeEvent | null>): Promise<BronzeEvent | null> {
    auth.requirePrincipal();
    const event = load ? await load(id) : ((await this.events.findByIds([id]))[0] ?? null);
    return event && auth.can(Capability.READ, event.namespace) ? event : null;
  }

  /** A page of a namespace's events in (occurredAt, id) order; needs `list`. */
  async list(
    auth: AuthContext,
    namespace: string,
    filter: EventListFilter,
    first: number | null | undefined,
    after: string | null | undefined,
  ): Promise<EventPage> {
    auth.require(Capability.LIST, namespace);
    const size = first ?? 50;
    if (!Number.isInteger(size) || size < 1 || size > this.limits.maxPageSize) {
      throw new BronzeException(BronzeExceptionCode.INVALID_ARGUMENT, `first must be between 1 and ${this.limits.maxPageSize} (MAX_PAGE_SIZE)`);
    }
    if (filter.from && filter.to && filter.from >= filter.to) {
      throw new BronzeException(BronzeExceptionCode.INVALID_ARGUMENT, 'filter.from must be before filter.to');
    }
    const rows = await this.matching(auth, namespace, filter, size + 1, after ? decodeCursor(after) : undefined);
    const page = rows.slice(0, size);
    const edges = page.map((r) => ({ cursor: encodeCursor(r.position), node: r.event }));
    return { edges, hasNextPage: rows.length > size, endCursor: edges.at(-1)?.cursor ?? null };
  }

  /**
   * A page of rows; with `contains`, only events whose content as this caller sees it (redactions
   * applied unless "admin", text-visibility.ts) contains the text, so the filter is no oracle for
   * redacted words. The repository returns candidates; pages are refilled until full.
   */
  private async matching(auth: AuthContext, namespace: string, filter: EventListFilter, limit: number, after?: Position) {
    const needle = filter.contains;
    if (!needle) return this.queries.list(namespace, filter, limit, after);
    const out: Array<{ event: BronzeEvent; position: Position }> = [];
    let from = after;
    for (;;) {
      const rows = await this.queries.list(namespace, filter, limit, from);
      const spans = await this.redactions(rows.map((r) => r.event.id));
      const byEvent = new Map<string, ComposeSpan[]>();
      for (const s of spans) byEvent.set(s.targetId, [...(byEvent.get(s.targetId) ?? []), s]);
      out.push(...rows.filter((r) => matchesText(visibleEventContent(auth, r.event, byEvent.get(r.event.id) ?? []), needle)));
      if (rows.length < limit || out.length >= limit) return out.slice(0, limit);
      from = rows.at(-1)?.position;
    }
  }

  /** A conversation in order (needs `read`). */
  async conversation(auth: AuthContext, namespace: string, conversationId: string, limit: number | null | undefined): Promise<BronzeEvent[]> {
    auth.require(Capability.READ, namespace);
    const n = limit ?? this.limits.maxConversationEvents;
    if (!Number.isInteger(n) || n < 1 || n > this.limits.maxConversationEvents) {
      throw new BronzeException(BronzeExceptionCode.INVALID_ARGUMENT, `limit must be between 1 and ${this.limits.maxConversationEvents}`);
    }
    return this.queries.conversation(namespace, conversationId, n);
  }

  /** Where a connector left off; `ingest` or `read` on the namespace. */
  async watermark(auth: AuthContext, namespace: string, source: string): Promise<Watermark | null> {
    const principal = auth.requirePrincipal();
    if (!auth.can(Capability.INGEST, namespace) && !auth.can(Capability.READ, namespace)) {
      throw new AccessException(
        AccessExceptionCode.FORBIDDEN,
        `token "${principal.name}" needs "ingest" or "read" on namespace "${namespace}" to read its watermarks`,
      );
    }
    return (await this.queries.watermark(namespace, source)) ?? null;
  }

  /**
   * An event reached through a search hit (capability "search") shows its content; its payload,
   * like everything beyond the hit (linked tool events, derived facts), needs what reading the
   * event directly needs: "read" on its namespace.
   */
  mayTraverse(auth: AuthContext, event: { namespace: string }): boolean {
    return auth.can(Capability.READ, event.namespace);
  }

  /** For a TOOL_RESULT: the TOOL_CALL it answers, when the caller may read beyond the event. */
  async toolCall(auth: AuthContext, event: LinkedEvent, load: ToolEventLoad): Promise<BronzeEvent | null> {
    if (event.kind !== EventKind.TOOL_RESULT || !event.toolCallId || !this.mayTraverse(auth, event)) return null;
    const linked = await load({ namespace: event.namespace, toolCallId: event.toolCallId });
    return linked.find((e) => e.kind === EventKind.TOOL_CALL) ?? null;
  }

  /** For a TOOL_CALL: its TOOL_RESULTs, oldest first, when the caller may read beyond the event. */
  async toolResults(auth: AuthContext, event: LinkedEvent, load: ToolEventLoad): Promise<BronzeEvent[]> {
    if (event.kind !== EventKind.TOOL_CALL || !event.toolCallId || !this.mayTraverse(auth, event)) return [];
    const linked = await load({ namespace: event.namespace, toolCallId: event.toolCallId });
    return linked.filter((e) => e.kind === EventKind.TOOL_RESULT);
  }

  /** An event a subscription delivers, read fresh; NOT_FOUND when the caller may no longer read it. */
  async deliveredEvent(auth: AuthContext, id: string): Promise<BronzeEvent> {
    const e = await this.getVisible(auth, id);
    if (!e) throw new BronzeException(BronzeExceptionCode.NOT_READABLE, `event ${id} is no longer readable with your grants`);
    return e;
  }

  // Batch reads for the request's loaders (request-scope.ts); they check no grants, the fields that use them do.

  /** Of these events, the ids `medallion import --unverified` created from a file whose chain did not verify. */
  unverifiedImports(ids: readonly string[]): Promise<Set<string>> {
    return this.events.unverifiedImports(ids);
  }

  byIds(ids: readonly string[]): Promise<BronzeEvent[]> {
    return this.events.findByIds(ids);
  }

  byToolCallIds(keys: ReadonlyArray<{ namespace: string; toolCallId: string }>): Promise<BronzeEvent[]> {
    return this.queries.byToolCallIds(keys);
  }
}
