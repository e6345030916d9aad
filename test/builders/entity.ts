import { randomUUID } from 'node:crypto';
import { Entity } from '../../src/silver/silver.types';

/** Builder for Silver entities: `anEntity().named('PostgreSQL', 'postgres', 'pg').ofType('technology').build()`. */
export class EntityBuilder {
  private data: Entity;

  constructor() {
    this.data = {
      id: randomUUID(),
      namespace: 'test',
      type: 'person',
      name: 'the user',
      aliases: [],
      recordedAt: new Date('2026-01-01T00:00:00Z'),
      retiredAt: null,
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
  named(name: string, ...aliases: string[]): this {
    Object.assign(this.data, { name, aliases });
    return this;
  }
  ofType(type: string): this {
    this.data.type = type;
    return this;
  }
  retiredAt(t: Date | string): this {
    this.data.retiredAt = new Date(t);
    return this;
  }
  build(): Entity {
    return { ...this.data, aliases: [...this.data.aliases] };
  }
}

export const anEntity = (): EntityBuilder => new EntityBuilder();
