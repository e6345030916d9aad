import { randomUUID } from 'node:crypto';
import { Entity, Fact } from '../../src/silver/silver.types';

/** Builder for Silver facts as the read side returns them: `aFact().saying('…').about(user).validFrom(t).build()`. */
export class FactBuilder {
  private data: Fact;

  constructor() {
    const now = new Date('2026-01-01T00:00:00Z');
    this.data = {
      id: randomUUID(),
      namespace: 'test',
      statement: 'The user uses vim',
      factType: 'preference',
      subjectEntityId: null,
      predicate: 'uses',
      objectValue: 'vim',
      objectEntityId: null,
      isNegation: false,
      confidence: 0.9,
      importance: 0.7,
      validFrom: now,
      validTo: null,
      recordedAt: now,
      retiredAt: null,
      supersededById: null,
      extractionModel: 'test@1',
      derivationRunId: randomUUID(),
    };
  }

  withId(id: string): this {
    this.data.id = id;
    return this;
  }
  inNamespace(namespace: string): this {
    this.data.namespace = namespace;
    return this;
  }
  saying(statement: string, predicate: string | null = this.data.predicate, objectValue: string | null = this.data.objectValue): this {
    Object.assign(this.data, { statement, predicate, objectValue });
    return this;
  }
  ofType(factType: string): this {
    this.data.factType = factType;
    return this;
  }
  about(subject: Pick<Entity, 'id'>): this {
    this.data.subjectEntityId = subject.id;
    return this;
  }
  negated(): this {
    this.data.isNegation = true;
    return this;
  }
  scored(confidence: number, importance: number): this {
    Object.assign(this.data, { confidence, importance });
    return this;
  }
  validFrom(t: Date | string): this {
    this.data.validFrom = new Date(t);
    return this;
  }
  validTo(t: Date | string): this {
    this.data.validTo = new Date(t);
    return this;
  }
  supersededBy(id: string, at: Date | string): this {
    Object.assign(this.data, { supersededById: id, validTo: new Date(at) });
    return this;
  }
  retiredAt(t: Date | string): this {
    this.data.retiredAt = new Date(t);
    return this;
  }
  build(): Fact {
    return { ...this.data };
  }
}

export const aFact = (): FactBuilder => new FactBuilder();
