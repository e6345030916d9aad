import { isExactNumber } from '../common/exact-json';
import { EventKind } from './event.types';

const RESULT_KEYS = ['toolCallId', 'tool_call_id', 'callId', 'call_id'] as const;
const CALL_KEYS = [...RESULT_KEYS, 'id'] as const;

/** At most `max` code units, never cutting a surrogate pair in two. */
function truncate(s: string, max: number): string {
  if (s.length <= max) return s;
  const code = s.charCodeAt(max - 1);
  return s.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}

/**
 * The id that links a tool call to its results, read from the raw payload: `toolCallId`,
 * `tool_call_id`, `callId` or `call_id` (and `id` on the call itself, as OpenAI and Anthropic
 * messages carry it). Null for other kinds or when absent.
 */
export function toolCallIdOf(kind: EventKind, payload: unknown): string | null {
  if (kind !== EventKind.TOOL_CALL && kind !== EventKind.TOOL_RESULT) return null;
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return null;
  const keys = kind === EventKind.TOOL_CALL ? CALL_KEYS : RESULT_KEYS;
  for (const key of keys) {
    const v = (payload as Record<string, unknown>)[key];
    if ((typeof v === 'string' && v !== '') || typeof v === 'number' || isExactNumber(v)) return truncate(String(v), 512);
  }
  return null;
}
