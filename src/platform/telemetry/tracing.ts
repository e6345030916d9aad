import { createHash } from 'node:crypto';
import { Attributes, context, Context, Link, propagation, Span, SpanKind, SpanStatusCode, trace, Tracer } from '@opentelemetry/api';

/**
 * OpenTelemetry spans of the pipeline (docs/operations.md "Tracing"). Off by default: until
 * `app/telemetry.ts` switches tracing on (an OTLP endpoint is configured), `traced` calls the work
 * directly and `currentTraceparent` returns null, so the off path costs one boolean test.
 *
 * Attributes carry ids, counts, kinds and a hash of the namespace, never content: no event text,
 * fact statement, query text or token. Names follow the GenAI memory conventions where they exist
 * (`gen_ai.operation.name` = `update_memory` / `search_memory`, `gen_ai.memory.store.id`); the rest
 * are `medallion.*`.
 */
let enabled = false;

export { SpanStatusCode };

/** Called by app/telemetry.ts once the SDK is registered (and with false when it shuts down). */
export function setTracingEnabled(on: boolean): void {
  enabled = on;
}

export function tracingEnabled(): boolean {
  return enabled;
}

function tracer(): Tracer {
  return trace.getTracer('medallion-memory');
}

/** Attribute names used by more than one floor. */
export const ATTR = {
  operation: 'gen_ai.operation.name',
  /** The memory store is the namespace, named by its hash (`namespaceHash`). */
  store: 'gen_ai.memory.store.id',
  events: 'medallion.events',
  facts: 'medallion.facts',
  rows: 'medallion.rows',
} as const;

/**
 * The namespace as a trace shows it: the first 16 hex digits of its SHA-256. Namespaces often name
 * a person (`user:alice@example.com`) and traces go to a third-party backend, so the name stays
 * out; an operator who knows a namespace finds its traces by hashing it the same way
 * (`printf %s NS | sha256sum | cut -c1-16`).
 */
export function namespaceHash(namespace: string): string {
  return createHash('sha256').update(namespace).digest('hex').slice(0, 16);
}

export interface SpanOptions {
  readonly kind?: SpanKind;
  /** A stored W3C traceparent to continue (the queued event's); unset: the active context. */
  readonly parent?: string | null;
  /** Other stored traceparents this span also follows (the rest of a batch). */
  readonly links?: ReadonlyArray<string | null>;
}

/** The span context a stored traceparent names, or undefined when it is absent or malformed. */
function contextOf(traceparent: string | null | undefined): Context | undefined {
  if (!traceparent) return undefined;
  const ctx = propagation.extract(context.active(), { traceparent });
  return trace.getSpanContext(ctx) ? ctx : undefined;
}

/** The distinct, well-formed traceparents of `opts.links` (the parent's excluded) as links, at most 32. */
function linksOf(opts: SpanOptions): Link[] {
  const links: Link[] = [];
  const seen = new Set<string>();
  for (const tp of opts.links ?? []) {
    const linked = tp === opts.parent ? undefined : contextOf(tp);
    const sc = linked ? trace.getSpanContext(linked) : undefined;
    if (!sc || seen.has(sc.spanId)) continue;
    seen.add(sc.spanId);
    links.push({ context: sc });
    if (links.length >= 32) break;
  }
  return links;
}

/**
 * Runs `work` inside a span named `name` when tracing is on (the span ends when it settles, with
 * the error recorded when it throws); calls `work` directly when tracing is off.
 */
export async function traced<T>(name: string, attributes: Attributes, work: (span: Span | undefined) => Promise<T>, opts: SpanOptions = {}): Promise<T> {
  if (!enabled) return work(undefined);
  const parent = opts.parent !== undefined ? (contextOf(opts.parent) ?? context.active()) : context.active();
  return tracer().startActiveSpan(name, { kind: opts.kind ?? SpanKind.INTERNAL, attributes, links: linksOf(opts) }, parent, async (span) => {
    try {
      return await work(span);
    } catch (err) {
      span.recordException(err instanceof Error ? { name: err.name, message: err.name } : { name: 'Error' });
      span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.name : 'error' });
      span.setAttribute('error.type', err instanceof Error ? err.name : 'Error');
      throw err;
    } finally {
      span.end();
    }
  });
}

/**
 * Starts a span that the caller ends (a request whose end is an event, not a promise) and runs
 * `next` in its context; undefined, and `next` runs as is, when tracing is off.
 */
export function startSpanAround(
  name: string,
  attributes: Attributes,
  carrier: Record<string, unknown>,
  next: () => void,
  kind = SpanKind.SERVER,
): Span | undefined {
  if (!enabled) {
    next();
    return undefined;
  }
  const parent = propagation.extract(context.active(), carrier);
  const span = tracer().startSpan(name, { kind, attributes }, parent);
  context.with(trace.setSpan(parent, span), next);
  return span;
}

/** The active span's W3C traceparent (stored with queued work so the worker continues the trace), or null when tracing is off. */
export function currentTraceparent(): string | null {
  if (!enabled) return null;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ?? null;
}

/** The active span, when tracing is on (to add counts once they are known). */
export function activeSpan(): Span | undefined {
  return enabled ? trace.getActiveSpan() : undefined;
}

/**
 * Starts a span the caller ends (work whose start and end sit in different callbacks: a drained
 * outbox batch), continuing `opts.parent` and linking `opts.links`; undefined when tracing is off.
 */
export function startSpan(name: string, attributes: Attributes, opts: SpanOptions = {}): Span | undefined {
  if (!enabled) return undefined;
  const parent = opts.parent !== undefined ? (contextOf(opts.parent) ?? context.active()) : context.active();
  return tracer().startSpan(name, { kind: opts.kind ?? SpanKind.INTERNAL, attributes, links: linksOf(opts) }, parent);
}
