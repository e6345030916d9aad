import { createDefaultHandler, RecordedRequest, stubReply, StubHandler } from './openai-stub-server';

interface WireCandidate {
  id: string;
  predicate: string | null;
  objectValue: string | null;
}

function userJson(req: RecordedRequest): { events?: Array<{ id: string; content: string }>; inputs?: Array<{ index: number; candidates: WireCandidate[] }> } {
  const messages = (req.body as { messages?: Array<{ role: string; content: unknown }> } | undefined)?.messages ?? [];
  for (const m of [...messages].reverse()) {
    if (m.role === 'user' && typeof m.content === 'string') {
      try {
        return JSON.parse(m.content);
      } catch {
        continue;
      }
    }
  }
  return {};
}

/**
 * A model that reads "<word>" events as "the user lives in <word>" (one single-valued fact per
 * event about one person) and a judge that supersedes the candidate with the same predicate:
 * deterministic supersession chains for tests that need many linked facts.
 */
export function livesInModel(): StubHandler {
  const fallback = createDefaultHandler({ embeddingDimensions: 8 });
  return (req) => {
    const schema = (req.body as { response_format?: { json_schema?: { name?: string } } } | undefined)?.response_format?.json_schema?.name;
    const payload = userJson(req);
    if (schema === 'extract_facts') {
      const events = payload.events ?? [];
      return stubReply.json({
        entities: events.length > 0 ? [{ ref: 'u', name: 'the user', type: 'person', aliases: [], mentions: [] }] : [],
        facts: events.map((e, i) => ({
          ref: `f${i}`, statement: `The user lives in ${e.content}`, factType: 'attribute', subjectRef: 'u', predicate: 'lives_in', objectValue: e.content,
          objectRef: null, isNegation: false, confidence: 0.9, validFrom: null, validTo: null, replacesValue: null,
          sources: [{ eventId: e.id, start: 0, end: e.content.length, quote: e.content }],
        })),
        relationships: [],
      });
    }
    if (schema === 'judge_facts') {
      return stubReply.json({
        decisions: (payload.inputs ?? []).map((input) => {
          const same = input.candidates.filter((c) => c.predicate === 'lives_in');
          const target = same[same.length - 1];
          return target ? { index: input.index, action: 'SUPERSEDE', targetId: target.id, reason: 'moved: lives_in holds one value' } : { index: input.index, action: 'ADD', targetId: null, reason: 'first residence' };
        }),
      });
    }
    return fallback(req);
  };
}
