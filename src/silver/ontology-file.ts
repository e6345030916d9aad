import fs from 'node:fs';
import { z } from 'zod';
import { DEFAULT_ONTOLOGY, Ontology } from './ontology';

const name = z.string().regex(/^[a-z][a-z0-9_]{0,62}$/, 'types are snake_case names');
const schema = z
  .object({
    entityTypes: z.array(name).min(1),
    relationshipTypes: z.array(name).min(1),
    fallbackEntityType: name.optional(),
    fallbackRelationshipType: name.optional(),
  })
  .strict();

/**
 * Reads an ontology file: `{ "entityTypes": [...], "relationshipTypes": [...],
 * "fallbackEntityType"?, "fallbackRelationshipType"? }`. The fallbacks must be in their lists
 * (defaults: concept, related_to). Without a file, the default ontology.
 */
export function loadOntology(file: string | undefined): Ontology {
  if (!file) return DEFAULT_ONTOLOGY;
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`ONTOLOGY_FILE ${file}: cannot read it as JSON (${(err as Error).message})`, { cause: err });
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    throw new Error(`ONTOLOGY_FILE ${file}: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
  }
  const o = parsed.data;
  const ontology: Ontology = {
    entityTypes: o.entityTypes,
    relationshipTypes: o.relationshipTypes,
    fallbackEntityType: o.fallbackEntityType ?? 'concept',
    fallbackRelationshipType: o.fallbackRelationshipType ?? 'related_to',
  };
  if (!ontology.entityTypes.includes(ontology.fallbackEntityType)) {
    throw new Error(`ONTOLOGY_FILE ${file}: entityTypes must include the fallback "${ontology.fallbackEntityType}" (or set fallbackEntityType)`);
  }
  if (!ontology.relationshipTypes.includes(ontology.fallbackRelationshipType)) {
    throw new Error(
      `ONTOLOGY_FILE ${file}: relationshipTypes must include the fallback "${ontology.fallbackRelationshipType}" (or set fallbackRelationshipType)`,
    );
  }
  return Object.freeze(ontology);
}
