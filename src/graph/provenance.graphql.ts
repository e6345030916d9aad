import { Field, Int, ObjectType, registerEnumType } from 'type-graphql';
import { Event } from '../bronze/event.graphql';
import { Entity, Fact, Relationship } from '../silver/fact.graphql';

export enum ProvenanceVia {
  DIRECT = 'DIRECT',
  SUPERSEDED = 'SUPERSEDED',
  SUPERSEDING = 'SUPERSEDING',
}
registerEnumType(ProvenanceVia, {
  name: 'ProvenanceVia',
  description:
    'DIRECT: the fact itself rests on the event; SUPERSEDED: a fact it replaced (transitively) does; SUPERSEDING: a fact that replaced it (transitively) does.',
});

export enum ChangeKind {
  ADDED = 'ADDED',
  SUPERSEDED = 'SUPERSEDED',
  RETIRED = 'RETIRED',
}
registerEnumType(ChangeKind, {
  name: 'ChangeKind',
  description: 'ADDED: recorded; SUPERSEDED: replaced by a newer fact; RETIRED: no longer believed (UPDATE, rebuild).',
});

@ObjectType({ description: 'One event (and span) a fact rests on, and how it is reached from the fact asked about.' })
export class ProvenanceStep {
  @Field(() => Fact, { description: 'The fact that carries the DERIVED_FROM edge.' }) fact!: Fact;
  @Field(() => Event) event!: Event;
  @Field(() => Int, { nullable: true, description: 'UTF-16 offset into the event content.' }) spanStart!: number | null;
  @Field(() => Int, { nullable: true }) spanEnd!: number | null;
  @Field(() => String, { nullable: true, description: 'content.slice(spanStart, spanEnd)' }) quote!: string | null;
  @Field(() => ProvenanceVia) via!: ProvenanceVia;
  @Field(() => Int, { description: 'SUPERSEDES hops from the fact asked about (0 for DIRECT).' }) distance!: number;
}

@ObjectType({ description: 'Where a fact comes from, resolved through the Neo4j projection.' })
export class Provenance {
  @Field(() => Fact, { nullable: true, description: 'The fact asked about; null when missing or outside your grants ("read").' })
  fact!: Fact | null;
  @Field(() => [ProvenanceStep], { description: 'DIRECT steps first, then SUPERSEDED and SUPERSEDING by distance.' })
  steps!: ProvenanceStep[];
}

@ObjectType({ description: 'A fact derived from an event, with the span of the event it rests on.' })
export class DerivedFact {
  @Field(() => Fact) fact!: Fact;
  @Field(() => Int, { nullable: true }) spanStart!: number | null;
  @Field(() => Int, { nullable: true }) spanEnd!: number | null;
  @Field(() => String, { nullable: true }) quote!: string | null;
}

@ObjectType({ description: 'Everything derived from one event, resolved through the Neo4j projection.' })
export class Derivation {
  @Field(() => Event, { nullable: true, description: 'The event asked about; null when missing or outside your grants ("read").' })
  event!: Event | null;
  @Field(() => [DerivedFact], { description: 'Facts (current and past) resting on the event.' }) facts!: DerivedFact[];
  @Field(() => [Entity], { description: 'Entities those facts are about.' }) entities!: Entity[];
  @Field(() => [Relationship], { description: 'Relationships the event is a source of.' }) relationships!: Relationship[];
}

@ObjectType({ description: 'Entities and the RELATED edges between them, from the Neo4j projection.' })
export class Subgraph {
  @Field(() => Entity, { nullable: true, description: 'The start entity; null when missing or outside your grants ("read").' })
  root!: Entity | null;
  @Field(() => [Entity], { description: 'Breadth-first from the root (a path: in path order).' }) entities!: Entity[];
  @Field(() => [Relationship], { description: 'A path: in path order, each edge may point either way.' }) relationships!: Relationship[];
}

@ObjectType({ description: 'A change to a fact of a namespace.' })
export class Change {
  @Field(() => ChangeKind) kind!: ChangeKind;
  @Field(() => Date, { description: 'When it happened (system time).' }) at!: Date;
  @Field(() => Fact) fact!: Fact;
}
