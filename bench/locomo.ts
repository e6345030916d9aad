import fs from 'node:fs';

/** One turn of a LoCoMo conversation as the embedders bench stores it: "Speaker: text [image: caption]". */
export interface LocomoTurn {
  id: string;
  passage: string;
}

export interface LocomoQuestion {
  question: string;
  category: number;
  /** Normalised turn ids ("D30:5") that exist in the conversation; never empty. */
  evidence: string[];
}

export interface LocomoConversation {
  sampleId: string;
  turns: LocomoTurn[];
  questions: LocomoQuestion[];
  /** Questions of categories 1-4 left out because none of their evidence ids names a turn. */
  skipped: number;
}

interface RawTurn {
  speaker: string;
  dia_id: string;
  text: string;
  blip_caption?: string;
}

interface RawSample {
  sample_id: string;
  conversation: Record<string, unknown>;
  qa: Array<{ question: string; category: number; evidence?: string[] }>;
}

/** "D30:05" → "D30:5"; anything else unchanged. */
export function normaliseDiaId(id: string): string {
  const m = /^D(\d+):(\d+)$/.exec(id.trim());
  return m ? `D${Number(m[1])}:${Number(m[2])}` : id.trim();
}

/**
 * Reads the LoCoMo file: turns of every session in order, questions of categories 1-4 (5, the
 * adversarial one, has no answer in the text) with evidence ids split on ";", normalised, and
 * filtered to ids that exist.
 */
export function loadLocomo(file: string): LocomoConversation[] {
  const samples = JSON.parse(fs.readFileSync(file, 'utf8')) as RawSample[];
  return samples.map((s) => {
    const sessions = Object.keys(s.conversation)
      .filter((k) => /^session_\d+$/.test(k) && Array.isArray(s.conversation[k]))
      .sort((a, b) => Number(a.slice(8)) - Number(b.slice(8)));
    const turns = sessions.flatMap((k) => (s.conversation[k] as RawTurn[]).map((t) => ({
      id: normaliseDiaId(t.dia_id),
      passage: `${t.speaker}: ${t.text}${t.blip_caption ? ` [image: ${t.blip_caption}]` : ''}`,
    })));
    const ids = new Set(turns.map((t) => t.id));
    let skipped = 0;
    const questions: LocomoQuestion[] = [];
    for (const q of s.qa) {
      if (!(q.category >= 1 && q.category <= 4)) continue;
      const evidence = [...new Set((q.evidence ?? []).flatMap((e) => e.split(';')).map(normaliseDiaId).filter((e) => ids.has(e)))];
      if (evidence.length === 0) skipped++;
      else questions.push({ question: q.question, category: q.category, evidence });
    }
    return { sampleId: s.sample_id, turns, questions, skipped };
  });
}
