import type { ExtractionEvent } from '../../silver/model-ports';

/**
 * Who speaks and who is spoken to, so that a fact can say "Melanie took Melanie's family
 * camping" instead of "I took my fam camping".
 *
 * - The speaker is the event's actor, else its role ("the user", "the assistant").
 * - The addressee ("you") is the nearest other party of the same conversation in the batch: the
 *   previous event with another actor, else the next one; between a user and an assistant
 *   without actors, the other role. Unknown when the batch shows no other party.
 */
export interface Parties {
  speaker: string;
  addressee: string | null;
}

const roleName = (role: string | null): string => (role === 'assistant' ? 'the assistant' : 'the user');

export const speakerOf = (ev: ExtractionEvent): string => ev.actor?.trim() || roleName(ev.role);

/** The nearest event of another party in the same conversation: the previous one, else the next (20 either way). */
function otherParty(events: readonly ExtractionEvent[], index: number): ExtractionEvent | null {
  const ev = events[index] as ExtractionEvent;
  const me = speakerOf(ev);
  const other = (e: ExtractionEvent | undefined): e is ExtractionEvent =>
    e !== undefined && e.conversationId === ev.conversationId && e.role !== 'tool' && e.role !== 'system' && speakerOf(e) !== me;
  for (let i = index - 1; i >= 0 && i >= index - 20; i--) if (other(events[i])) return events[i] as ExtractionEvent;
  for (let i = index + 1; i < events.length && i <= index + 20; i++) if (other(events[i])) return events[i] as ExtractionEvent;
  return null;
}

/** The addressee of events[index], from its neighbours in the same conversation. */
export function addresseeOf(events: readonly ExtractionEvent[], index: number): string | null {
  const ev = events[index] as ExtractionEvent;
  const hit = otherParty(events, index);
  if (hit) return speakerOf(hit);
  if (!ev.actor && (ev.role === 'user' || ev.role === 'assistant')) return roleName(ev.role === 'user' ? 'assistant' : 'user');
  return null;
}

/**
 * Whether events[index] speaks to the assistant: the other party beside it has the assistant's
 * role, or no other party is in sight (a memory service's listener is its agent). Between two
 * people ("keep it up!", "keep me posted") an imperative is encouragement, not an instruction.
 */
export function speaksToAssistant(events: readonly ExtractionEvent[], index: number): boolean {
  const hit = otherParty(events, index);
  return hit === null || hit.role === 'assistant';
}

/**
 * Where the spoken text starts: after a `"<actor>: "` prefix when the content carries the
 * speaker's name (chat exports, transcripts), else 0. Spans stay offsets into the full content.
 */
export function bodyStart(content: string, actor: string | null): number {
  const name = actor?.trim();
  if (!name || !content.startsWith(name)) return 0;
  const m = /^\s*:\s*/.exec(content.slice(name.length));
  return m ? name.length + m[0].length : 0;
}

export const possessive = (name: string): string => (name.endsWith('s') ? `${name}'` : `${name}'s`);

// Informal kin and group words a possessive is written out for ("my fam" → "Melanie's family").
const INFORMAL: Record<string, string> = {
  fam: 'family',
  hubby: 'husband',
  kiddos: 'kids',
  kiddo: 'kid',
  bro: 'brother',
  sis: 'sister',
  bf: 'boyfriend',
  gf: 'girlfriend',
  bff: 'best friend',
  edu: 'education',
  fave: 'favourite',
  fav: 'favourite',
};

/**
 * First and second person written out as the parties' names, in a phrase that is not the clause
 * subject: my/mine/our → "<speaker>'s", me/us/I → the speaker, myself/ourselves → "themselves",
 * your/yours → "<addressee>'s", you/ya → the addressee. Null when the phrase says "you" and the
 * addressee is unknown (the fact would not be self-contained).
 */
export function rewritePersons(phrase: string, p: Parties): string | null {
  let unresolved = false;
  const s = p.speaker;
  const a = p.addressee;
  const you = (form: 'obj' | 'pos'): string => {
    if (!a) {
      unresolved = true;
      return form === 'pos' ? 'your' : 'you';
    }
    return form === 'pos' ? possessive(a) : a;
  };
  const out = phrase
    .replace(
      /\b(?:my|our)\s+(fam|hubby|kiddos|kiddo|bro|sis|bf|gf|bff|edu|fave|fav)\b/gi,
      (_m, w: string) => `${possessive(s)} ${INFORMAL[w.toLowerCase()] ?? w}`,
    )
    .replace(/\b(?:myself|ourselves)\b/gi, 'themselves')
    .replace(/\byourself\b|\byourselves\b/gi, () => you('obj'))
    .replace(/\b(?:my|mine|our|ours)\b/gi, possessive(s))
    .replace(/\bI'm\b|\bI am\b/g, `${s} is`)
    .replace(/\bI have\b(?!\s+to\b)/g, `${s} has`)
    .replace(/\bI don't\b|\bI do not\b/g, `${s} does not`)
    .replace(/\bwe're\b|\bwe are\b/gi, `${s} and others are`)
    .replace(/\bwe've\b/gi, `${s} and others have`)
    .replace(/\bwe\b/gi, `${s} and others`)
    .replace(/\bI've\b/g, `${s} has`)
    .replace(/\bI'll\b/g, `${s} will`)
    .replace(/\bI'd\b/g, `${s} would`)
    .replace(/\b(?:me|I)\b(?!-)/g, s)
    .replace(/\bMe\b/g, s)
    .replace(/\bus\b/g, `${s} and others`)
    .replace(
      /\b(you|you guys)('re|'ve|'ll|'d)\b/gi,
      (_m, _w: string, c: string) =>
        `${you('obj')} ${({ "'re": 'is', "'ve": 'has', "'ll": 'will', "'d": 'would' } as Record<string, string>)[c.toLowerCase()] ?? ''}`,
    )
    .replace(/\b(?:your|yours)\b/gi, () => you('pos'))
    .replace(/\b(?:you guys|you all|y'all)\b/gi, () => you('obj'))
    .replace(/\b(?:you|ya)\b/gi, () => you('obj'));
  return unresolved ? null : out;
}

/** True when the phrase refers to the speaker (first person), for clauses with another subject. */
export const mentionsSpeaker = (phrase: string): boolean => /\b(?:my|me|mine|myself|our|ours|ourselves)\b/i.test(phrase) || /\b(?:I|us)\b/.test(phrase);
