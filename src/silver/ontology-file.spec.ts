import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_ONTOLOGY } from './ontology';
import { loadOntology } from './ontology-file';
import { applyQualityGate } from './quality-gate';

const write = (content: unknown): string => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ontology-')), 'ontology.json');
  fs.writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
};

describe('ontology as configuration (ONTOLOGY_FILE)', () => {
  it('defaults to the built-in ontology', () => {
    expect(loadOntology(undefined)).toBe(DEFAULT_ONTOLOGY);
  });

  it('loads a custom ontology, which the gate then enforces', () => {
    const ontology = loadOntology(
      write({
        entityTypes: ['person', 'device', 'thing'],
        relationshipTypes: ['owns', 'linked'],
        fallbackEntityType: 'thing',
        fallbackRelationshipType: 'linked',
      }),
    );
    const event = {
      id: 'e',
      content: 'Ana owns a Pixel phone',
      kind: 'message',
      role: 'user',
      actor: null,
      occurredAt: new Date(),
      conversationId: null,
      sequenceNum: null,
    };
    const span = { eventId: 'e', start: 0, end: 3 };
    const { result, notes } = applyQualityGate(
      {
        entities: [
          { ref: 'a', name: 'Ana', type: 'person', aliases: [], mentions: [span] },
          { ref: 'p', name: 'Pixel', type: 'technology', aliases: [], mentions: [span] },
        ],
        facts: [],
        relationships: [{ ref: 'r', type: 'uses', sourceRef: 'a', targetRef: 'p', confidence: 0.9, validFrom: null, sources: [span] }],
      },
      [event],
      ontology,
    );
    expect(result.entities.map((e) => e.type)).toEqual(['person', 'thing']);
    expect(result.relationships[0]?.type).toBe('linked');
    expect(notes.map((n) => n.rule)).toEqual([1, 2]);
  });

  it.each([
    ['not json', '{oops', /cannot read it as JSON/],
    ['bad names', { entityTypes: ['Person'], relationshipTypes: ['related_to'] }, /snake_case/],
    ['unknown keys', { entityTypes: ['concept'], relationshipTypes: ['related_to'], extra: 1 }, /extra|Unrecognized/],
    ['missing fallback', { entityTypes: ['person'], relationshipTypes: ['related_to'] }, /must include the fallback "concept"/],
  ])('refuses %s with a message naming the file', (_n, content, message) => {
    expect(() => loadOntology(write(content))).toThrow(message);
    expect(() => loadOntology(write(content))).toThrow(/ONTOLOGY_FILE/);
  });
});
