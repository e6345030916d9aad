import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { z } from 'zod';
import { ModelException, ModelExceptionCode } from '../../silver/model.exception';
import type { ParseOutcome, PromptMessage } from '../../silver/prompts/extract-facts.prompt';
import { ConcurrencyLimiter } from '../../common/concurrency';

/**
 * Settings shared by the OpenAI-compatible adapters (OpenAI, Ollama, vLLM, LM Studio, llama.cpp
 * server). Every model is optional: an adapter is built only for the models that are named.
 */
export interface OpenAIModelsOptions {
  /** Sent as the bearer token; local servers usually ignore it (a placeholder is sent when unset). */
  apiKey?: string;
  /** e.g. `http://127.0.0.1:11434/v1` for Ollama; defaults to `https://api.openai.com/v1`. */
  baseUrl?: string;
  extractionModel?: string;
  judgeModel?: string;
  embeddingModel?: string;
  /** Required for embedding models not in KNOWN_EMBEDDING_DIMENSIONS. */
  embeddingDimensions?: number;
  /** Per HTTP attempt, not per call: a call may take (maxRetries + 1) x timeoutMs plus backoff. */
  timeoutMs: number;
  /** Retries after the first attempt, on 408/409/429/5xx, timeouts and connection errors. */
  maxRetries: number;
  /** Most HTTP requests in flight at once across all adapters of one `createOpenAIModels` set. */
  concurrency: number;
  /** First backoff delay (default 500 ms), doubled per retry, with jitter. */
  retryBaseDelayMs?: number;
  /** Backoff cap (default 8000 ms). */
  retryMaxDelayMs?: number;
  /** Extra round-trips that show the model its invalid output and the problems (default 1). */
  repairAttempts?: number;
  /** Texts per embeddings request (default 256). */
  embeddingBatchSize?: number;
  /** Sampling temperature for chat calls; not sent when unset (some reasoning models reject it). */
  temperature?: number;
}

/** The client, limiter and retry policy shared by one set of adapters. */
export interface OpenAIRuntime {
  readonly client: OpenAI;
  readonly limiter: ConcurrencyLimiter;
  readonly timeoutMs: number;
  readonly maxRetries: number;
  readonly retryBaseDelayMs: number;
  readonly retryMaxDelayMs: number;
  readonly repairAttempts: number;
  readonly temperature: number | undefined;
}

export function createOpenAIRuntime(options: OpenAIModelsOptions): OpenAIRuntime {
  const intAtLeast = (name: string, value: number | undefined, min: number) => {
    if (value !== undefined && (!Number.isInteger(value) || value < min)) throw new RangeError(`${name} must be an integer >= ${min}, got ${value}`);
  };
  intAtLeast('timeoutMs', options.timeoutMs, 1);
  intAtLeast('maxRetries', options.maxRetries, 0);
  intAtLeast('repairAttempts', options.repairAttempts, 0);
  intAtLeast('retryBaseDelayMs', options.retryBaseDelayMs, 0);
  intAtLeast('retryMaxDelayMs', options.retryMaxDelayMs, 0);
  const client = new OpenAI({
    // Everything explicit: the SDK would otherwise read OPENAI_* variables itself (config.ts owns the environment).
    apiKey: options.apiKey ?? 'not-needed',
    baseURL: options.baseUrl ?? 'https://api.openai.com/v1',
    organization: null,
    project: null,
    timeout: options.timeoutMs,
    // Retries are ours (callWithRetry): attempts are counted, the backoff is configurable and the
    // concurrency slot is released while waiting.
    maxRetries: 0,
    logLevel: 'warn',
  });
  return {
    client,
    limiter: new ConcurrencyLimiter(options.concurrency),
    timeoutMs: options.timeoutMs,
    maxRetries: options.maxRetries,
    retryBaseDelayMs: options.retryBaseDelayMs ?? 500,
    retryMaxDelayMs: options.retryMaxDelayMs ?? 8000,
    repairAttempts: options.repairAttempts ?? 1,
    temperature: options.temperature,
  };
}

const MAX_RETRY_AFTER_MS = 60_000;
const RAW_OUTPUT_LIMIT = 8000;

/** Cuts model output kept for dead letters to a bounded size. */
export function truncateRaw(raw: string): string {
  return raw.length <= RAW_OUTPUT_LIMIT ? raw : `${raw.slice(0, RAW_OUTPUT_LIMIT)}…[${raw.length - RAW_OUTPUT_LIMIT} more chars]`;
}

interface Classified {
  retryable: boolean;
  timeout: boolean;
  retryAfterMs: number | undefined;
  message: string;
}

function classify(err: unknown, what: string, timedOut: boolean): Classified | undefined {
  if (err instanceof APIUserAbortError) return undefined;
  // The SDK only recognises its own abort when the abort error is an `Error` of its realm (not
  // under jest's vm, for one), so an attempt that lasted the whole timeout counts as a timeout.
  if (err instanceof APIConnectionTimeoutError || (err instanceof APIConnectionError && timedOut)) {
    return { retryable: true, timeout: true, retryAfterMs: undefined, message: `${what} timed out` };
  }
  if (err instanceof APIConnectionError) {
    return {
      retryable: true,
      timeout: false,
      retryAfterMs: undefined,
      message: `${what} could not connect (${err.message}): check OPENAI_BASE_URL and that the model server is running`,
    };
  }
  if (err instanceof APIError && typeof err.status === 'number') {
    const status = err.status;
    const retryable = status === 408 || status === 409 || status === 429 || status >= 500;
    const hint =
      status === 401 || status === 403
        ? ': check OPENAI_API_KEY'
        : status === 404
          ? ': check the model name and OPENAI_BASE_URL'
          : status === 429
            ? ': rate limited, lower the concurrency or raise the quota'
            : '';
    return { retryable, timeout: false, retryAfterMs: retryAfter(err.headers), message: `${what} failed with HTTP ${status} (${err.message})${hint}` };
  }
  // Anything else the SDK throws (an unparsable HTTP body, say) is the server's fault, not the model's.
  return { retryable: false, timeout: false, retryAfterMs: undefined, message: `${what} failed: ${err instanceof Error ? err.message : String(err)}` };
}

function retryAfter(headers: Headers | undefined): number | undefined {
  const ms = Number.parseFloat(headers?.get('retry-after-ms') ?? '');
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers?.get('retry-after');
  if (!value) return undefined;
  const seconds = Number.parseFloat(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

function backoffMs(runtime: OpenAIRuntime, retry: number, retryAfterMs: number | undefined): number {
  if (retryAfterMs !== undefined && retryAfterMs <= MAX_RETRY_AFTER_MS) return retryAfterMs;
  const exp = Math.min(runtime.retryMaxDelayMs, runtime.retryBaseDelayMs * 2 ** (retry - 1));
  return exp * (0.5 + Math.random() * 0.5); // jitter: 50..100% of the exponential delay
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Runs one HTTP call inside the concurrency limit, retrying transient failures with exponential
 * backoff and jitter (a server's retry-after / retry-after-ms up to 60 s wins). Other 4xx errors
 * are not retried. Throws ModelException TIMEOUT when the last attempt timed out, UNAVAILABLE
 * otherwise, with the number of attempts made.
 */
export async function callWithRetry<T>(runtime: OpenAIRuntime, what: string, call: () => Promise<T>): Promise<{ value: T; attempts: number }> {
  for (let attempt = 1; ; attempt++) {
    let startedAt = 0;
    try {
      const value = await runtime.limiter.run(() => {
        startedAt = Date.now();
        return call();
      });
      return { value, attempts: attempt };
    } catch (err) {
      const c = classify(err, what, startedAt > 0 && Date.now() - startedAt >= runtime.timeoutMs * 0.95);
      if (c === undefined) throw err;
      if (!c.retryable || attempt > runtime.maxRetries) {
        const code = c.timeout ? ModelExceptionCode.TIMEOUT : ModelExceptionCode.UNAVAILABLE;
        const tail = c.retryable ? ` after ${attempt} attempt(s)` : ' (not retried)';
        throw new ModelException(code, `${c.message}${tail}`, undefined, attempt);
      }
      await sleep(backoffMs(runtime, attempt, c.retryAfterMs));
    }
  }
}

/** A zod schema as a strict `json_schema` response format (OpenAI's subset: no length keywords). */
export function toResponseFormat(name: string, schema: z.ZodType) {
  const json = z.toJSONSchema(schema, { target: 'draft-2020-12' }) as Record<string, unknown>;
  delete json.$schema;
  return {
    type: 'json_schema' as const,
    json_schema: { name, strict: true, schema: stripUnsupported(json) as Record<string, unknown> },
  };
}

// Length keywords are not in OpenAI's strict subset and z.int() adds safe-integer bounds; the
// returned output is validated with the zod schema anyway, so nothing is lost.
function stripUnsupported(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(stripUnsupported);
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'minLength' || key === 'maxLength') continue;
    if ((key === 'minimum' || key === 'maximum') && Math.abs(value as number) >= Number.MAX_SAFE_INTEGER) continue;
    out[key] = stripUnsupported(value);
  }
  return out;
}

/** Parses model text as JSON, tolerating a Markdown code fence some local servers add. */
export function parseJsonText(text: string): unknown {
  const fenced = /^\s*```(?:json)?\s*([\s\S]*?)\s*```\s*$/i.exec(text);
  return JSON.parse(fenced ? fenced[1] : text);
}

export interface StructuredCall<T> {
  model: string;
  messages: PromptMessage[];
  schemaName: string;
  schema: z.ZodType;
  /** Validates the parsed JSON against the schema and the request. */
  parse: (json: unknown) => ParseOutcome<T>;
  /** For error messages: "extraction of 12 events". */
  what: string;
}

/**
 * One chat completion with a strict json_schema response format, validated; on invalid output
 * the model is shown its answer and the problems up to `repairAttempts` times, then
 * MALFORMED_OUTPUT is thrown with the last raw output. `attempts` counts every HTTP attempt.
 */
export async function completeStructured<T>(runtime: OpenAIRuntime, req: StructuredCall<T>): Promise<T> {
  const responseFormat = toResponseFormat(req.schemaName, req.schema);
  const messages: PromptMessage[] = [...req.messages];
  let attempts = 0;
  for (let round = 0; ; round++) {
    const { value: completion, attempts: n } = await callWithRetry(runtime, req.what, () =>
      runtime.client.chat.completions.create({
        model: req.model,
        messages,
        response_format: responseFormat,
        ...(runtime.temperature === undefined ? {} : { temperature: runtime.temperature }),
      }),
    ).catch((err: unknown) => {
      if (err instanceof ModelException) throw new ModelException(err.code, err.message, err.rawOutput, attempts + (err.attempts ?? 0));
      throw err;
    });
    attempts += n;
    const choice = completion.choices?.[0];
    const raw = choice?.message?.content ?? '';
    const problems = checkOutput(choice, raw, req.parse);
    if (problems.ok) return problems.value;
    if (round >= runtime.repairAttempts) {
      throw new ModelException(
        ModelExceptionCode.MALFORMED_OUTPUT,
        `${req.what}: the model's output is invalid: ${problems.problems.slice(0, 10).join('; ')}`,
        truncateRaw(raw),
        attempts,
      );
    }
    messages.push(
      { role: 'assistant', content: raw },
      {
        role: 'user',
        content: `Your answer was rejected:\n- ${problems.problems.slice(0, 20).join('\n- ')}\nReply with the complete corrected JSON object only.`,
      },
    );
  }
}

type Choice = OpenAI.Chat.Completions.ChatCompletion['choices'][number] | undefined;

function checkOutput<T>(choice: Choice, raw: string, parse: (json: unknown) => ParseOutcome<T>): ParseOutcome<T> {
  if (choice === undefined) return { ok: false, problems: ['the response has no choices'] };
  if (choice.message.refusal) return { ok: false, problems: [`the model refused: ${choice.message.refusal}`] };
  if (choice.finish_reason === 'length') return { ok: false, problems: ['the output was cut off at the token limit'] };
  if (raw.trim() === '') return { ok: false, problems: ['the output is empty'] };
  let json: unknown;
  try {
    json = parseJsonText(raw);
  } catch (err) {
    return { ok: false, problems: [`the output is not JSON (${(err as Error).message})`] };
  }
  return parse(json);
}
