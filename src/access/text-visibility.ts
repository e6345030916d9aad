import type { AuthContext } from './auth-context';
import { Capability } from './capability';
import { composeText, ComposeSpan, REDACTION_PLACEHOLDER, spansWithin } from '../common/compose-text';

/**
 * What a principal may see of the text of a fact, an event or an overlay: the one place that
 * decides it (docs/overlays.md "Who sees what"). Every read path (GraphQL fields, filters,
 * subscriptions, MCP tools, graph exploration, the projection to Neo4j) asks here.
 *
 * - Everyone sees the composed text: a fact's statement and its derived strings (`object`) with
 *   the overlays applied, an event's content with its redactions hidden.
 * - `admin` on the namespace also sees the machine text (`Fact.machineStatement`) and an event's
 *   content and payload verbatim; nobody else does.
 * - An overlay's selector (`exact`, `prefix`, `suffix`) and `body` quote the machine text: on a
 *   target with an active redaction they are shown only to `admin` and to the overlay's author.
 * - `contains` filters match the composed text (`matchesText`), so they cannot serve as a yes/no
 *   oracle for redacted words.
 * - Text derived from statements (a judge's reason) follows the facts it names (`composeReason`).
 * - An entity's names follow the spans it was found in (`entityNamesHidden`), and so does text
 *   derived from names (`hideNames`).
 * - A hash of a text confirms a guess of it offline, so it is shown only to who sees the text
 *   itself: an overlay's `textHash` with the machine text (`visibleTextHash`), an event's checksum
 *   with its payload, and never once the event is erased (`visibleChecksum`).
 */

type Span = ComposeSpan;

const textChanging = (spans: readonly Span[]): Span[] => spans.filter((s) => s.kind !== 'ANNOTATION');
const overlaps = (s: Span, from: number, to: number): boolean => s.start < to && from < s.end;

function occurrences(text: string, part: string): number[] {
  const at: number[] = [];
  if (part.length === 0) return at;
  const lower = text.toLowerCase();
  const needle = part.toLowerCase();
  for (let i = lower.indexOf(needle); i >= 0; i = lower.indexOf(needle, i + 1)) at.push(i);
  return at;
}

/**
 * A string derived from a fact's statement (its `object`), composed like the statement: the
 * overlays that cover its occurrence in the Silver statement are applied to it (a redaction of
 * the whole statement hides it too). When it does not occur in the statement, a fact with a
 * redaction hides it whole (the offsets say nothing about it), and an edit leaves it as it is.
 */
export function composeDerived(value: string | null, machineStatement: string, spans: readonly Span[]): string | null {
  const applied = textChanging(spans);
  if (value === null || applied.length === 0) return value;
  const at = occurrences(machineStatement, value);
  if (at.length === 0) return applied.some((s) => s.kind === 'REDACTION') ? REDACTION_PLACEHOLDER : value;
  // Several occurrences: the one a redaction touches decides (never the clean copy of a hidden word).
  const redacted = at.find((p) => applied.some((s) => s.kind === 'REDACTION' && overlaps(s, p, p + value.length)));
  const p = redacted ?? (at[0] as number);
  return composeText(machineStatement.slice(p, p + value.length), spansWithin(applied, p, p + value.length));
}

/** One fact a derived text names: its Silver statement, the statement as callers see it, and its overlay spans. */
export interface NamedFact {
  readonly machineStatement: string;
  readonly statement: string;
  readonly spans: readonly Span[];
}

/**
 * A text derived from the statements of the facts it names (a judge's reason quotes the old
 * statement, or its value, or words of it), as every caller sees it: hidden whole when one of
 * those facts has an active redaction (which of its words came from the hidden span is not
 * recorded, so no part of it can be shown safely); otherwise each verbatim copy of an edited
 * statement reads as the fact does.
 */
export function composeReason(text: string, facts: readonly NamedFact[]): string {
  if (facts.some((f) => f.spans.some((s) => s.kind === 'REDACTION'))) return REDACTION_PLACEHOLDER;
  return facts.reduce(
    (out, f) => (f.statement === f.machineStatement || f.machineStatement.length === 0 ? out : out.split(f.machineStatement).join(f.statement)),
    text,
  );
}

/** Where an entity was found: a span of one event's content (silver.entity_mentions), in UTF-16 code units. */
export interface Mention {
  readonly eventId: string;
  readonly start: number;
  readonly end: number;
}

/** Whether every code unit of [start, end) lies inside a REDACTION span (an empty span is not hidden). */
function coveredByRedaction(spans: readonly Span[], start: number, end: number): boolean {
  if (end <= start) return false;
  const ranges = spans.filter((s) => s.kind === 'REDACTION' && s.end > start && s.start < end).sort((a, b) => a.start - b.start);
  let at = start;
  for (const r of ranges) {
    if (r.start > at) return false;
    at = Math.max(at, r.end);
    if (at >= end) return true;
  }
  return false;
}

/**
 * Whether an entity's names (its name and aliases) are hidden: the extractor found it somewhere,
 * and every place it found it (`mentions`, all `total` of them) lies inside a redacted span of its
 * event. A name is text derived from those spans, so it follows them; one place left visible shows
 * it (the words are readable there anyway). For every caller, as `Fact.statement` is composed.
 */
export function entityNamesHidden(mentions: readonly Mention[], total: number, redactionsOf: (eventId: string) => readonly Span[]): boolean {
  if (total === 0 || mentions.length < total) return false;
  return mentions.every((m) => coveredByRedaction(redactionsOf(m.eventId), m.start, m.end));
}

/** An entity (Silver or Gold) with the names it shows: `[redacted]` and no aliases when they are hidden. */
export function visibleNames<E extends { name: string; aliases: string[] }>(entity: E, hidden: boolean): E {
  return hidden ? { ...entity, name: REDACTION_PLACEHOLDER, aliases: [] } : entity;
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A text derived from entity names (a promotion reason, a Gold name or alias), as callers see it:
 * `[redacted]` whole when it holds one of the hidden names as a word (case-insensitive).
 */
export function hideNames(text: string, hiddenNames: readonly string[]): string {
  const names = hiddenNames.filter((n) => n.trim().length > 0 && n !== REDACTION_PLACEHOLDER);
  if (names.length === 0) return text;
  const pattern = new RegExp(`(?:^|[^\\p{L}\\p{N}])(?:${names.map(escapeRegExp).join('|')})(?:[^\\p{L}\\p{N}]|$)`, 'iu');
  return pattern.test(text) ? REDACTION_PLACEHOLDER : text;
}

/** Whether the caller sees machine text (Silver statement, event bytes and payload) of this namespace. */
export function seesMachineText(auth: AuthContext, namespace: string): boolean {
  return auth.can(Capability.ADMIN, namespace);
}

/** `Fact.machineStatement`: the Silver text for `admin` on the fact's namespace; null for everyone else. */
export function visibleMachineStatement(auth: AuthContext, fact: { namespace: string; machineStatement?: string; statement: string }): string | null {
  return seesMachineText(auth, fact.namespace) ? (fact.machineStatement ?? fact.statement) : null;
}

/** An event's content as this caller sees it: verbatim for `admin`, else with its redacted spans hidden. */
export function visibleEventContent(auth: AuthContext, event: { namespace: string; content: string }, redactions: readonly Span[]): string {
  return redactions.length === 0 || seesMachineText(auth, event.namespace) ? event.content : composeText(event.content, redactions);
}

/**
 * Whether the caller may see an event's raw payload: it is the event's verbatim input, so an
 * active redaction of the event hides it whole from everyone without `admin` (its offsets are
 * into the content, not the payload).
 */
export function maySeeRawPayload(auth: AuthContext, event: { namespace: string }, redactions: readonly Span[]): boolean {
  return redactions.length === 0 || seesMachineText(auth, event.namespace);
}

/**
 * An event's checksum (SHA-256 of its canonical submission, content and payload included) for
 * this caller: shown to who may see the payload (no active redaction, or `admin`), and to nobody
 * once the event is erased, as the checksum would confirm a guess of the erased content.
 */
export function visibleChecksum(
  auth: AuthContext,
  event: { namespace: string; checksum: string; destroyedAt: Date | null },
  redactions: readonly Span[],
): string | null {
  if (event.destroyedAt !== null) return null;
  return maySeeRawPayload(auth, event, redactions) ? event.checksum : null;
}

/** An overlay's `textHash` (SHA-256 of the Silver text it was placed on): for who sees that text (`admin`), null for everyone else. */
export function visibleTextHash(auth: AuthContext, overlay: { namespace: string; textHash: string }): string | null {
  return seesMachineText(auth, overlay.namespace) ? overlay.textHash : null;
}

/** The machine-text parts of an overlay (its selector's quotes and body). */
export interface OverlayText {
  readonly namespace: string;
  readonly authorId: string;
  readonly selector: { readonly exact: string; readonly prefix: string; readonly suffix: string; readonly start: number; readonly end: number };
  readonly body: string | null;
}

/**
 * An overlay's selector and body as this caller sees them. They quote the machine text, so on a
 * target with an active redaction (`targetRedacted`) only `admin` and the overlay's author see
 * them; for everyone else the quotes and the body are `[redacted]` (offsets and kind stay, so the
 * reader still knows a span was overlaid).
 */
export function visibleOverlayText<O extends OverlayText>(auth: AuthContext, overlay: O, targetRedacted: boolean): O {
  if (!targetRedacted || seesMachineText(auth, overlay.namespace) || auth.principal?.principalId === overlay.authorId) return overlay;
  const hide = (s: string) => (s.length === 0 ? s : REDACTION_PLACEHOLDER);
  return {
    ...overlay,
    selector: { ...overlay.selector, exact: hide(overlay.selector.exact), prefix: hide(overlay.selector.prefix), suffix: hide(overlay.selector.suffix) },
    body: overlay.body === null ? null : hide(overlay.body),
  };
}

/** A `contains` filter on text as the caller sees it (case-insensitive, like the SQL ILIKE it refines). */
export function matchesText(text: string, needle: string): boolean {
  return text.toLowerCase().includes(needle.toLowerCase());
}
