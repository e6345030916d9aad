import { Arg, Ctx, ID, Int, Query, Resolver, UseMiddleware } from 'type-graphql';
import { StorableTextArgs } from '../common/storable-args.middleware';
import { GraphContext } from './graph.context';
import { Event } from '../bronze/event.graphql';
import { Entity, Fact, Relationship } from '../silver/fact.graphql';
import { RelatedEdge } from './cypher/graph-read';
import { Change, ChangeKind, ChangeSubject, Derivation, DerivedFact, Provenance, ProvenanceStep, ProvenanceVia, Subgraph } from './provenance.graphql';
import { SubgraphResult } from './provenance.service';

const toRelationship = (e: RelatedEdge): Relationship =>
  Object.assign(new Relationship(), {
    id: e.id,
    type: e.type,
    sourceEntityId: e.sourceEntityId,
    targetEntityId: e.targetEntityId,
    confidence: Number(e.confidence),
    validFrom: new Date(e.validFrom),
    validTo: e.validTo === null ? null : new Date(e.validTo),
  });

const toSubgraph = (s: SubgraphResult): Subgraph =>
  Object.assign(new Subgraph(), {
    root: s.root ? Entity.from(s.root) : null,
    entities: s.entities.map(Entity.from),
    relationships: s.relationships.map(toRelationship),
  });

@UseMiddleware(StorableTextArgs)
@Resolver()
export class ProvenanceResolver {
  @Query(() => Provenance, {
    description: 'The fact and every event (with span) it rests on, through its supersession chain too; resolved through Neo4j (needs "read").',
  })
  async provenance(@Arg('factId', () => ID) factId: string, @Ctx() ctx: GraphContext): Promise<Provenance> {
    const p = await ctx.services.provenance.provenance(ctx.auth, ctx.loaders, factId);
    return Object.assign(new Provenance(), {
      fact: p.fact ? Fact.from(p.fact) : null,
      steps: p.steps.map((s) =>
        Object.assign(new ProvenanceStep(), { ...s, fact: Fact.from(s.fact), event: Event.from(s.event), via: s.via as ProvenanceVia }),
      ),
    });
  }

  @Query(() => Derivation, { description: 'Every fact (with span), entity and relationship derived from an event; resolved through Neo4j (needs "read").' })
  async derivedFrom(@Arg('eventId', () => ID) eventId: string, @Ctx() ctx: GraphContext): Promise<Derivation> {
    const d = await ctx.services.provenance.derivedFrom(ctx.auth, ctx.loaders, eventId);
    return Object.assign(new Derivation(), {
      event: d.event ? Event.from(d.event) : null,
      facts: d.facts.map((f) => Object.assign(new DerivedFact(), { ...f, fact: Fact.from(f.fact) })),
      entities: d.entities.map(Entity.from),
      relationships: d.relationships.map(toRelationship),
    });
  }

  @Query(() => Subgraph, {
    description:
      'Entities and RELATED edges within depth hops (1..3, either direction) of an entity, in its namespace; valid at asOf (validFrom <= asOf < validTo) or current, never retired; relationshipTypes (empty = all) limits the edges followed. Needs "read"; refused above 500 entities.',
  })
  async neighbourhood(
    @Arg('entityId', () => ID) entityId: string,
    @Arg('depth', () => Int, { nullable: true, defaultValue: 1 }) depth: number | null,
    @Arg('asOf', () => Date, { nullable: true }) asOf: Date | null,
    @Arg('relationshipTypes', () => [String], { nullable: true }) relationshipTypes: string[] | null,
    @Ctx() ctx: GraphContext,
  ): Promise<Subgraph> {
    return toSubgraph(await ctx.services.provenance.neighbourhood(ctx.auth, ctx.loaders, entityId, depth ?? 1, { asOf, relationshipTypes }));
  }

  @Query(() => Subgraph, {
    nullable: true,
    description:
      'The shortest chain of RELATED edges (either direction, at most maxDepth hops, 1..6) between two entities of one namespace, valid at asOf or current; null when there is none, or when either entity is missing or outside your grants ("read").',
  })
  async shortestPath(
    @Arg('fromEntityId', () => ID) fromEntityId: string,
    @Arg('toEntityId', () => ID) toEntityId: string,
    @Arg('maxDepth', () => Int, { nullable: true, defaultValue: 4 }) maxDepth: number | null,
    @Arg('asOf', () => Date, { nullable: true }) asOf: Date | null,
    @Ctx() ctx: GraphContext,
  ): Promise<Subgraph | null> {
    const path = await ctx.services.provenance.shortestPath(ctx.auth, ctx.loaders, fromEntityId, toEntityId, maxDepth ?? 4, { asOf });
    return path ? toSubgraph(path) : null;
  }

  @Query(() => [Change], {
    description:
      'What changed in a namespace after since, oldest first (needs "list"); first defaults to 100. subjects (default [FACT]): facts added, superseded or retired; GOLD_ENTITY and GOLD_RELATIONSHIP: Gold rows created, updated, merged, split or retired by promotion (their goldEntity / goldRelationship, silverEntities and reason).',
  })
  async changes(
    @Arg('namespace', () => String) namespace: string,
    @Arg('since', () => Date) since: Date,
    @Arg('first', () => Int, { nullable: true }) first: number | null,
    @Arg('subjects', () => [ChangeSubject], { nullable: true, defaultValue: [ChangeSubject.FACT] }) subjects: ChangeSubject[] | null,
    @Ctx() ctx: GraphContext,
  ): Promise<Change[]> {
    const rows = await ctx.services.provenance.changes(ctx.auth, ctx.loaders, namespace, since, first, subjects ?? [ChangeSubject.FACT]);
    return rows.map((c) =>
      Object.assign(new Change(), {
        namespace: c.namespace,
        subject: c.subject as ChangeSubject,
        kind: c.kind as ChangeKind,
        at: c.at,
        fact: c.fact ? Fact.from(c.fact) : null,
        ...c.gold,
      }),
    );
  }
}
