import { createHash } from 'node:crypto';
import http, { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local OpenAI-compatible HTTP server for tests and benchmarks: the LLM is faked only at its
 * HTTP boundary, so the real `openai` client runs. Answers POST `/v1/chat/completions` and
 * `/v1/embeddings` (also without the `/v1` prefix) from a FIFO queue of scripted replies, then
 * from a handler (default: `defaultHandler`). Records every request and the peak number of
 * requests in flight.
 */

export interface RecordedRequest {
  method: string;
  /** Path without the query string, e.g. `/v1/chat/completions`. */
  path: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body (undefined when the body is not JSON). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a test server reads whatever JSON the client sent
  body: any;
  receivedAt: number;
}

export type StubReply =
  /** A chat completion whose assistant message has this content. */
  | { type: 'chat'; content: string | null; finishReason?: 'stop' | 'length'; refusal?: string }
  /** An embeddings list; encoded as floats or base64 (Float32 LE) as the request asked. */
  | { type: 'embeddings'; vectors: number[][] }
  /** Any status, body and headers, e.g. an OpenAI-style error. */
  | { type: 'http'; status: number; body?: unknown; headers?: Record<string, string> }
  /** Never answers (until the client gives up or the server closes). */
  | { type: 'hang' }
  /** Destroys the connection without an answer. */
  | { type: 'drop' };

export type StubHandler = (req: RecordedRequest) => StubReply | Promise<StubReply>;

/** Builders for scripted replies. */
export const stubReply = {
  /** A chat completion whose content is `JSON.stringify(value)`. */
  json: (value: unknown): StubReply => ({ type: 'chat', content: JSON.stringify(value) }),
  text: (content: string): StubReply => ({ type: 'chat', content }),
  embeddings: (vectors: number[][]): StubReply => ({ type: 'embeddings', vectors }),
  error: (status: number, message = `stub error ${status}`, headers?: Record<string, string>): StubReply => ({
    type: 'http',
    status,
    headers,
    body: { error: { message, type: status === 429 ? 'rate_limit_exceeded' : 'server_error', param: null, code: null } },
  }),
  rateLimited: (retryAfterSeconds: number): StubReply => stubReply.error(429, 'Rate limit reached', { 'retry-after': String(retryAfterSeconds) }),
  hang: (): StubReply => ({ type: 'hang' }),
  drop: (): StubReply => ({ type: 'drop' }),
};

export interface OpenAIStubServerOptions {
  handler?: StubHandler;
  /** Delay before every answer (a benchmark uses 300 ms to stand in for a real model). */
  latencyMs?: number;
  /** Vector length of `defaultHandler` embeddings when the request has no `dimensions` (default 8). */
  embeddingDimensions?: number;
}

export interface OpenAIStubServer {
  /** `http://127.0.0.1:<port>/v1`, ready for the client's `baseURL`. */
  readonly baseUrl: string;
  readonly requests: RecordedRequest[];
  /** Requests being handled right now and the most ever at once. */
  readonly inFlight: number;
  readonly maxInFlight: number;
  /** Scripted replies, used in order before the handler. */
  enqueue(...replies: StubReply[]): void;
  setHandler(handler: StubHandler): void;
  setLatency(ms: number): void;
  /** Forgets recorded requests, queued replies and the in-flight peak. */
  reset(): void;
  close(): Promise<void>;
}

export async function startOpenAIStubServer(options: OpenAIStubServerOptions = {}): Promise<OpenAIStubServer> {
  const requests: RecordedRequest[] = [];
  const queue: StubReply[] = [];
  let handler: StubHandler = options.handler ?? createDefaultHandler({ embeddingDimensions: options.embeddingDimensions });
  let latencyMs = options.latencyMs ?? 0;
  let inFlight = 0;
  let maxInFlight = 0;
  let counter = 0;

  const server = http.createServer((req, res) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    let done = false;
    const finish = () => {
      if (!done) {
        done = true;
        inFlight--;
      }
    };
    res.on('close', finish);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          body = undefined;
        }
        const path = (req.url ?? '/').split('?')[0];
        const recorded: RecordedRequest = { method: req.method ?? 'GET', path, headers: req.headers, body, receivedAt: Date.now() };
        requests.push(recorded);
        const route = routeOf(recorded);
        if (route === undefined) return send(res, 404, { error: { message: `no route for ${recorded.method} ${path}`, type: 'invalid_request_error' } });
        const reply = queue.shift() ?? (await handler(recorded));
        if (reply.type === 'hang') return; // the client's timeout aborts; close() ends the socket
        // unref: a reply still waiting when a test ends (its client was killed) must not keep jest alive.
        if (latencyMs > 0) await new Promise((r) => setTimeout(r, latencyMs).unref());
        if (res.destroyed) return;
        writeReply(res, reply, recorded, ++counter);
      })().catch((err: unknown) => send(res, 500, { error: { message: `stub handler failed: ${String(err)}`, type: 'server_error' } }));
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    get inFlight() {
      return inFlight;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    enqueue: (...replies) => void queue.push(...replies),
    setHandler: (h) => void (handler = h),
    setLatency: (ms) => void (latencyMs = ms),
    reset: () => {
      requests.length = 0;
      queue.length = 0;
      maxInFlight = inFlight;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}

function routeOf(req: RecordedRequest): 'chat' | 'embeddings' | undefined {
  if (req.method !== 'POST') return undefined;
  if (/^(\/v1)?\/chat\/completions$/.test(req.path)) return 'chat';
  if (/^(\/v1)?\/embeddings$/.test(req.path)) return 'embeddings';
  return undefined;
}

function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

function writeReply(res: http.ServerResponse, reply: Exclude<StubReply, { type: 'hang' }>, req: RecordedRequest, n: number): void {
  const model = typeof req.body?.model === 'string' ? req.body.model : 'stub-model';
  const created = Math.floor(Date.now() / 1000);
  switch (reply.type) {
    case 'drop':
      res.socket?.destroy();
      return;
    case 'http':
      return send(res, reply.status, reply.body ?? {}, reply.headers);
    case 'chat':
      return send(res, 200, {
        id: `chatcmpl-stub-${n}`,
        object: 'chat.completion',
        created,
        model,
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: reply.content, refusal: reply.refusal ?? null },
            finish_reason: reply.finishReason ?? 'stop',
            logprobs: null,
          },
        ],
        usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
      });
    case 'embeddings': {
      // Like OpenAI: floats only when asked for, base64 (Float32 little-endian) otherwise.
      const asFloat = req.body?.encoding_format === 'float';
      const encode = (v: number[]) => (asFloat ? v : Buffer.from(new Float32Array(v).buffer).toString('base64'));
      return send(res, 200, {
        object: 'list',
        data: reply.vectors.map((v, index) => ({ object: 'embedding', index, embedding: encode(v) })),
        model,
        usage: { prompt_tokens: 0, total_tokens: 0 },
      });
    }
  }
}

/**
 * Plausible deterministic answers for any request, so a benchmark can run many calls: extraction
 * echoes one fact per event (its whole content as the source span), the judge ADDs every input,
 * embeddings are hash-derived vectors (not normalised, like some local servers).
 */
export function createDefaultHandler(options: { embeddingDimensions?: number } = {}): StubHandler {
  return (req) => {
    if (/embeddings$/.test(req.path)) {
      const input: string[] = Array.isArray(req.body?.input) ? req.body.input : [String(req.body?.input ?? '')];
      const dims = typeof req.body?.dimensions === 'number' ? req.body.dimensions : (options.embeddingDimensions ?? 8);
      return stubReply.embeddings(input.map((text) => hashVector(text, dims)));
    }
    const schemaName = req.body?.response_format?.json_schema?.name;
    const payload = lastUserJson(req);
    if (schemaName === 'extract_facts') {
      const events: Array<{ id: string; content: string }> = Array.isArray(payload?.events) ? payload.events : [];
      return stubReply.json({
        entities: [],
        facts: events
          .filter((e) => e.content.length > 0)
          .map((e, i) => ({
            ref: `f${i + 1}`,
            statement: e.content.slice(0, 200),
            factType: 'other',
            subjectRef: null,
            predicate: null,
            objectValue: null,
            objectRef: null,
            isNegation: false,
            confidence: 0.5,
            validFrom: null,
            validTo: null,
            replacesValue: null,
            sources: [{ eventId: e.id, start: 0, end: e.content.length, quote: e.content }],
          })),
        relationships: [],
      });
    }
    if (schemaName === 'judge_facts') {
      const inputs: unknown[] = Array.isArray(payload?.inputs) ? payload.inputs : [];
      return stubReply.json({ decisions: inputs.map((_, index) => ({ index, action: 'ADD', targetId: null, reason: 'stub: always ADD' })) });
    }
    return stubReply.text('ok');
  };
}

export const defaultHandler: StubHandler = createDefaultHandler();

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the scripted replies read free-form JSON
function lastUserJson(req: RecordedRequest): any {
  const messages: Array<{ role: string; content: unknown }> = Array.isArray(req.body?.messages) ? req.body.messages : [];
  // The last user message that is JSON: a repair round appends a plain-text user message.
  for (const m of [...messages].reverse()) {
    if (m.role !== 'user' || typeof m.content !== 'string') continue;
    try {
      return JSON.parse(m.content);
    } catch {
      continue;
    }
  }
  return undefined;
}

function hashVector(text: string, dims: number): number[] {
  const out: number[] = [];
  for (let block = 0; out.length < dims; block++) {
    const digest = createHash('sha256').update(`${block}:${text}`).digest();
    for (let i = 0; i + 1 < digest.length && out.length < dims; i += 2) out.push(digest.readUInt16LE(i) / 32768 - 1);
  }
  return out;
}
