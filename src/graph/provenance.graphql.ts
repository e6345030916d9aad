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
  UPDATED = 'UPDATED',
  MERGED = 'MERGED',
  SPLIT = 'SPLIT',
}
registerEnumType(ChangeKind, {
  name: 'ChangeKind',
  description:
    'Facts: ADDED (recorded), SUPERSEDED (replaced by a newer fact), RETIRED (no longer believed: UPDATE, rebuild). Gold entities and relationships: ADDED (created by promotion or a split), UPDATED (new content), MERGED (a Silver entity joined it), SPLIT (members moved out by splitGoldEntity), RETIRED.',
});

export enum ChangeSubject {
  FACT = 'FACT',
  GOLD_ENTITY = 'GOLD_ENTITY',
  GOLD_RELATIONSHIP = 'GOLD_RELATIONSHIP',
}
registerEnumType(ChangeSubject, { name: 'ChangeSubject', description: 'What a change is about: a Silver fact, a Gold entity or a Gold relationship.' });

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

@ObjectType({ description: 'A change to a fact, a Gold entity or a Gold relationship of a namespace.' })
export class Change {
  @Field(() => String) namespace!: string;
  @Field(() => ChangeSubject, { description: 'FACT unless changes was asked for Gold subjects.' }) subject!: ChangeSubject;
  @Field(() => ChangeKind) kind!: ChangeKind;
  @Field(() => Date, { description: 'When it happened (system time).' }) at!: Date;
  @Field(() => Fact, { nullable: true, description: 'The fact of a FACT change (always set for it); null for Gold changes.' }) fact!: Fact | null;
  @Field(() => String, { nullable: true, description: 'Gold changes: why, as the promotion log records it.' }) reason!: string | null;
  goldEntityId!: string | null;
  goldRelationshipId!: string | null;
  silverIds!: string[];
}
