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
          ref: `f${i}`,
          statement: `The user lives in ${e.content}`,
          factType: 'attribute',
          subjectRef: 'u',
          predicate: 'lives_in',
          objectValue: e.content,
          objectRef: null,
          isNegation: false,
          confidence: 0.9,
          validFrom: null,
          validTo: null,
          replacesValue: null,
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
          return target
            ? { index: input.index, action: 'SUPERSEDE', targetId: target.id, reason: 'moved: lives_in holds one value' }
            : { index: input.index, action: 'ADD', targetId: null, reason: 'first residence' };
        }),
      });
    }
    return fallback(req);
  };
}

type Span = { eventId: string; start: number; end: number; quote: string };
const spanOf = (e: { id: string; content: string }, word: string): Span => {
  const start = e.content.indexOf(word);
  return { eventId: e.id, start, end: start + word.length, quote: word };
};

/**
 * A small team graph for tests that need many linked facts, entities and relationships:
 * - "Roster: Tool0, Tool1, ..." gives "The user knows ToolI" per name (fact, entity, knows edge);
 * - "CityI ToolI" gives "The user lives in CityI" (lives_in: a supersession chain, each one
 *   replacing the latest before it) and "The user uses ToolI" (fact, uses edge).
 * Every fact is about "the user"; tool facts also have the tool as their object entity.
 */
export function teamModel(): StubHandler {
  const fallback = createDefaultHandler({ embeddingDimensions: 8 });
  return (req) => {
    const schema = (req.body as { response_format?: { json_schema?: { name?: string } } } | undefined)?.response_format?.json_schema?.name;
    const payload = userJson(req);
    if (schema === 'extract_facts') {
      const entities = new Map<string, { ref: string; name: string; type: string; aliases: string[]; mentions: Span[] }>();
      const entity = (name: string, type: string): string => {
        const found = entities.get(name) ?? { ref: `e${entities.size}`, name, type, aliases: [], mentions: [] };
        entities.set(name, found);
        return found.ref;
      };
      const facts: unknown[] = [];
      const relationships: unknown[] = [];
      const fact = (statement: string, predicate: string, objectValue: string, objectRef: string | null, source: Span) =>
        facts.push({
          ref: `f${facts.length}`,
          statement,
          factType: objectRef ? 'relationship' : 'attribute',
          subjectRef: entity('the user', 'person'),
          predicate,
          objectValue,
          objectRef,
          isNegation: false,
          confidence: 0.9,
          validFrom: null,
          validTo: null,
          replacesValue: null,
          sources: [source],
        });
      const related = (type: string, targetRef: string, source: Span) =>
        relationships.push({
          ref: `r${relationships.length}`,
          type,
          sourceRef: entity('the user', 'person'),
          targetRef,
          confidence: 0.9,
          validFrom: null,
          sources: [source],
        });
      for (const e of payload.events ?? []) {
        const words = e.content.split(/[\s,:]+/).filter(Boolean);
        if (words[0] === 'Roster') {
          for (const tool of words.slice(1)) {
            const ref = entity(tool, 'technology');
            fact(`The user knows ${tool}`, 'knows', tool, ref, spanOf(e, tool));
            related('knows', ref, spanOf(e, tool));
          }
          continue;
        }
        const [city = e.content, tool] = words;
        fact(`The user lives in ${city}`, 'lives_in', city, null, spanOf(e, city));
        if (tool) {
          const ref = entity(tool, 'technology');
          fact(`The user uses ${tool}`, 'uses', tool, ref, spanOf(e, tool));
          related('uses', ref, spanOf(e, tool));
        }
      }
      return stubReply.json({ entities: [...entities.values()], facts, relationships });
    }
    if (schema === 'judge_facts') {
      type Input = { index: number; new?: { predicate: string | null }; candidates: Array<WireCandidate & { validFrom: string }> };
      return stubReply.json({
        decisions: ((payload.inputs ?? []) as Input[]).map((input) => {
          const latest =
            input.new?.predicate === 'lives_in'
              ? input.candidates
                  .filter((c) => c.predicate === 'lives_in')
                  .sort((a, b) => a.validFrom.localeCompare(b.validFrom) || a.id.localeCompare(b.id))
                  .pop()
              : undefined;
          return latest
            ? { index: input.index, action: 'SUPERSEDE', targetId: latest.id, reason: 'moved: lives_in holds one value' }
            : { index: input.index, action: 'ADD', targetId: null, reason: 'a new claim' };
        }),
      });
    }
    return fallback(req);
  };
}

/**
 * An extractor that reads each event by a script the test may change between phases (what the
 * event's content says: its facts' statements, all "preference" facts about "the user", each
 * quoting the whole event), and a judge that SKIPs a fact whose statement a candidate already
 * says word for word, else ADDs. For write-path tests: corroboration, rebuilds that keep,
 * change and drop facts.
 */
export function scriptedStatementsModel(script: () => Record<string, string[]>): StubHandler {
  const fallback = createDefaultHandler({ embeddingDimensions: 8 });
  return (req) => {
    const schema = (req.body as { response_format?: { json_schema?: { name?: string } } } | undefined)?.response_format?.json_schema?.name;
    const payload = userJson(req) as {
      events?: Array<{ id: string; content: string }>;
      inputs?: Array<{ index: number; new?: { statement?: string }; candidates: Array<{ id: string; statement?: string }> }>;
    };
    if (schema === 'extract_facts') {
      const events = payload.events ?? [];
      const facts = events.flatMap((e) =>
        (script()[e.content] ?? []).map((statement) => ({
          statement,
          factType: 'preference',
          subjectRef: 'u',
          predicate: null,
          objectValue: null,
          objectRef: null,
          isNegation: false,
          confidence: 0.9,
          validFrom: null,
          validTo: null,
          replacesValue: null,
          sources: [{ eventId: e.id, start: 0, end: e.content.length, quote: e.content }],
        })),
      );
      return stubReply.json({
        entities: facts.length > 0 ? [{ ref: 'u', name: 'the user', type: 'person', aliases: [], mentions: [] }] : [],
        facts: facts.map((f, i) => ({ ref: `f${i}`, ...f })),
        relationships: [],
      });
    }
    if (schema === 'judge_facts') {
      return stubReply.json({
        decisions: (payload.inputs ?? []).map((input) => {
          const same = input.candidates.find((c) => c.statement === input.new?.statement);
          return same
            ? { index: input.index, action: 'SKIP', targetId: same.id, reason: 'said before, word for word' }
            : { index: input.index, action: 'ADD', targetId: null, reason: 'new' };
        }),
      });
    }
    return fallback(req);
  };
}
