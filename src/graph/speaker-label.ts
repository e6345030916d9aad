import { eng as ENGLISH_STOP_WORDS } from 'stopword';

/** What a turn says and who says it, with a leading speaker label ("Name: …") taken out of the text. */
export interface SpokenTurn {
  /** Who speaks: the label, when the content starts with one, else the event's actor (null when neither). */
  speaker: string | null;
  /** The content without the label: what the turn says. */
  body: string;
}

const LABEL = /^([^:\n]{1,40}):\s+/;
const STOP_WORDS: ReadonlySet<string> = new Set(ENGLISH_STOP_WORDS);

/**
 * Splits a chat turn's speaker label from what it says. Chat exports and agent frameworks write
 * turns as "Caroline: I went to the support group" or "jd_88: lol": the label names the speaker,
 * which the event also carries as `actor`. Search matches the speaker as a field of its own
 * (docs/search.md): a name in a question must not pick a turn because the turn starts with that
 * name ("Caroline: ?"), and a turn must not be found by its content words less because a label
 * lengthened it.
 *
 * A label is taken out when it is the event's actor (any case), or, for an event without an actor,
 * when it looks like one: one to three name-like tokens (letters, digits, `. _ - '`), none of
 * them a stop word, before ": ". A label other than the actor is a heading ("Note: …") and stays;
 * "My answer: yes" or "The reason is simple: …" keep their text; "http://…" is no label (no
 * space after the colon); a turn that is only a label keeps it as its body.
 */
export function splitSpeakerLabel(content: string, actor: string | null): SpokenTurn {
  const m = LABEL.exec(content.trimStart());
  const fallback = { speaker: actor?.trim() || null, body: content };
  if (!m) return fallback;
  const label = (m[1] ?? '').trim();
  const rest = content.trimStart().slice(m[0].length);
  if (label.length === 0 || rest.trim().length === 0) return fallback;
  const isActor = actor !== null && label.toLowerCase() === actor.trim().toLowerCase();
  return isActor || (actor === null && looksLikeName(label)) ? { speaker: label, body: rest } : fallback;
}

function looksLikeName(label: string): boolean {
  const tokens = label.split(/\s+/);
  return tokens.length <= 3 && tokens.every((t) => /^[\p{L}\p{N}][\p{L}\p{N}._'-]*$/u.test(t) && !STOP_WORDS.has(t.toLowerCase()));
}
