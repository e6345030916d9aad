import type { ExtractedEntity, Span } from '../../silver/model-ports';
import type { EntityType } from '../../silver/ontology';
import { lookupTech } from '../../silver/vocabulary/gazetteer';

/** An entity while a batch is being extracted. */
export interface WorkingEntity {
  ref: string;
  name: string;
  type: EntityType;
  category: string | null;
  aliases: string[];
  mentions: Span[];
}

interface Sighting {
  entity: WorkingEntity;
  event: number;
  at: number;
}

// Definite descriptions a clause may use for an entity named earlier ("the database", "our DB").
const DESCRIPTIONS: ReadonlyArray<readonly [RegExp, (e: WorkingEntity) => boolean]> = [
  [/^(?:database|databases|db|dbs|datastore|data store)$/, (e) => /database|warehouse|timeseries|vector-db/.test(e.category ?? '')],
  [/^warehouse$/, (e) => e.category === 'warehouse'],
  [/^(?:editor|ide)$/, (e) => e.category === 'editor'],
  [/^(?:shell|terminal|browser|cache|cloud)$/, (e) => e.category !== null],
  [/^(?:os|distro|operating system)$/, (e) => e.category === 'os'],
  [/^(?:queue|broker|message broker|bus)$/, (e) => e.category === 'messaging'],
  [/^(?:language|lang)$/, (e) => e.type === 'programming_language'],
  [/^(?:framework|library|lib)$/, (e) => e.type === 'framework'],
  [
    /^(?:service|app|application|project|product|platform|tool|api|system|repo|repository|codebase|backend|frontend|site|website|pipeline)$/,
    (e) => e.type === 'project',
  ],
  [/^(?:company|employer|firm|startup|org|organisation|organization)$/, (e) => e.type === 'organization'],
  [/^(?:city|town|country|place)$/, (e) => e.type === 'place'],
];

const SAME_CATEGORY_HEAD = /^(?:shell|terminal|browser|cache|cloud)$/;

/**
 * The entities of one extraction batch and a simple, documented coreference:
 * - "he/she/him/her" → the most recent person sighted before the pronoun (the speaker excluded);
 * - "they/them" → the most recent organisation, else the most recent non-person, sighted in this
 *   or the previous event: a thing named turns ago is not what "they" means now ("Yuki made new
 *   onboarding screens and they're so pretty, I'm building them" is not about JavaScript, named
 *   three turns before);
 * - "it" → the last non-person subject of a third-person clause in this or the previous event,
 *   else the most recent non-person sighted before the pronoun;
 * - "the/our/my <head>" → the most recent entity the head describes (database → a database,
 *   service → a project, ...); the description is added to that entity's aliases.
 */
export class EntityRegistry {
  private readonly byKey = new Map<string, WorkingEntity>();
  private readonly ordered: WorkingEntity[] = [];
  private readonly sightings: Sighting[] = [];
  private lastSubject: { entity: WorkingEntity; event: number } | null = null;

  /** Finds or creates the entity; records the mention and a sighting at (event, at). */
  upsert(name: string, type: EntityType, category: string | null, mention: Span | null, event: number, alias?: string): WorkingEntity {
    const key = `${type === 'person' ? 'person' : type === 'place' ? 'place' : 'thing'}:${name.toLowerCase()}`;
    let entity = this.byKey.get(key) ?? this.findByAlias(name);
    if (!entity) {
      entity = { ref: `e${this.ordered.length + 1}`, name, type, category, aliases: [], mentions: [] };
      this.byKey.set(key, entity);
      this.ordered.push(entity);
    }
    if (alias && alias.toLowerCase() !== entity.name.toLowerCase()) this.addAlias(entity, alias);
    if (mention) this.sight(entity, mention, event);
    return entity;
  }

  sight(entity: WorkingEntity, mention: Span, event: number): void {
    if (!entity.mentions.some((m) => m.eventId === mention.eventId && m.start === mention.start && m.end === mention.end)) entity.mentions.push(mention);
    this.sightings.push({ entity, event, at: mention.start });
  }

  addAlias(entity: WorkingEntity, alias: string): void {
    const a = alias.trim();
    if (a.length === 0 || a.toLowerCase() === entity.name.toLowerCase()) return;
    if (!entity.aliases.some((x) => x.toLowerCase() === a.toLowerCase())) entity.aliases.push(a);
  }

  findByName(name: string): WorkingEntity | undefined {
    const lower = name.toLowerCase();
    return this.ordered.find((e) => e.name.toLowerCase() === lower) ?? this.findByAlias(name);
  }

  private findByAlias(name: string): WorkingEntity | undefined {
    const lower = name.toLowerCase();
    const tech = lookupTech(name);
    return this.ordered.find((e) => e.aliases.some((a) => a.toLowerCase() === lower) || (tech !== undefined && e.name === tech.name));
  }

  noteSubject(entity: WorkingEntity, event: number): void {
    if (entity.type !== 'person') this.lastSubject = { entity, event };
  }

  /** Resolves a pronoun or a definite description at (event, at); null when nothing fits. */
  resolve(phrase: string, event: number, at: number, speaker: WorkingEntity | null): WorkingEntity | null {
    const p = phrase.trim().toLowerCase();
    const before = this.sightings.filter((s) => s.event < event || (s.event === event && s.at < at)).reverse();
    if (/^(?:he|him|his|she|her|hers)$/.test(p)) return before.find((s) => s.entity.type === 'person' && s.entity !== speaker)?.entity ?? null;
    if (/^(?:they|them|their)$/.test(p)) {
      const near = before.filter((s) => event - s.event <= 1);
      return near.find((s) => s.entity.type === 'organization')?.entity ?? near.find((s) => s.entity.type !== 'person')?.entity ?? null;
    }
    if (/^(?:it|its)$/.test(p)) {
      if (this.lastSubject && event - this.lastSubject.event <= 1) return this.lastSubject.entity;
      // Only a thing named in this turn or the one before: "It's a real inspiring story" many turns
      // after "the LGBTQ conference" is about something else (an unrecognised title, a picture).
      return before.find((s) => event - s.event <= 1 && s.entity.type !== 'person' && s.entity.type !== 'place')?.entity ?? null;
    }
    const m = /^(?:the|our|my|their|this|that)\s+(?:(?:main|current|new|old|internal|production|prod)\s+)?(.+)$/.exec(p);
    if (!m) return null;
    const head = m[1] as string;
    for (const [re, fits] of DESCRIPTIONS) {
      if (!re.test(head)) continue;
      const hit = before.find((s) => fits(s.entity) && (!SAME_CATEGORY_HEAD.test(head) || s.entity.category === head));
      if (hit) {
        this.addAlias(hit.entity, phrase.trim());
        return hit.entity;
      }
    }
    return null;
  }

  toExtracted(): ExtractedEntity[] {
    return this.ordered.map((e) => ({ ref: e.ref, name: e.name, type: e.type, aliases: [...e.aliases], mentions: [...e.mentions] }));
  }
}
