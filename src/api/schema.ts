import 'reflect-metadata';
import { GraphQLSchema, lexicographicSortSchema, printSchema } from 'graphql';
import { DateTimeResolver } from 'graphql-scalars';
import { buildSchema } from 'type-graphql';
import { TokenResolver } from '../access/token.resolver';
import { ApprovalResolver } from '../access/approval.resolver';
import { ErasureResolver } from '../bronze/erasure.resolver';
import { RetentionResolver } from '../bronze/retention.resolver';
import { EventResolver } from '../bronze/event.resolver';
import { GraphResolver } from '../graph/graph.resolver';
import { SearchResolver } from '../graph/search.resolver';
import { ProvenanceResolver } from '../graph/provenance.resolver';
import { buildExploreSchema, mergeExploreSchema } from './explore/explore.schema';
import { createAppPubSub } from '../platform/pubsub/topics';
import { EntityResolver, RelationshipResolver } from '../silver/entity.resolver';
import { EventFactsResolver, FactResolver, FactSourceResolver } from '../silver/fact.resolver';
import { PipelineResolver } from '../silver/pipeline.resolver';
import { GoldEntityResolver, GoldRelationshipResolver } from '../gold/promotion/gold.resolver';
import { EventContentResolver, FactOverlayResolver, OverlayResolver, OverlayTextResolver } from '../gold/overlay/overlay.resolver';
import { AboutResolver } from '../gold/about/about.resolver';
import { LifecycleResolver } from '../gold/decay/lifecycle.resolver';
import { ReviewResolver } from '../gold/review/review.resolver';
import { QualityResolver } from '../gold/quality/quality.resolver';
import { GoldChangeResolver, GoldPreferenceResolver, RelatedContextResolver } from '../gold/reads/gold-reads.resolver';

export const resolvers = [
  EventResolver,
  EventFactsResolver,
  FactResolver,
  FactSourceResolver,
  EntityResolver,
  RelationshipResolver,
  PipelineResolver,
  GraphResolver,
  SearchResolver,
  ProvenanceResolver,
  OverlayResolver,
  FactOverlayResolver,
  OverlayTextResolver,
  EventContentResolver,
  TokenResolver,
  ApprovalResolver,
  ErasureResolver,
  RetentionResolver,
  GoldEntityResolver,
  GoldRelationshipResolver,
  AboutResolver,
  ReviewResolver,
  RelatedContextResolver,
  GoldPreferenceResolver,
  LifecycleResolver,
  GoldChangeResolver,
  QualityResolver,
] as const;

/** The one GraphQL schema: the code-first resolvers plus the generated graph exploration API. */
export async function buildAppSchema(): Promise<GraphQLSchema> {
  const [codeFirst, explore] = await Promise.all([buildCodeFirstSchema(), buildExploreSchema()]);
  return mergeExploreSchema(codeFirst, explore);
}

function buildCodeFirstSchema(): Promise<GraphQLSchema> {
  return buildSchema({
    resolvers,
    scalarsMap: [{ type: Date, scalar: DateTimeResolver }],
    // Subscriptions resolve their own sources (ctx.services.pubSub); type-graphql still wants one.
    pubSub: createAppPubSub(),
    validate: false,
    emitSchemaFile: false,
  });
}

/** `schema.graphql` as committed: sorted so the file diffs cleanly. */
export async function printAppSchema(): Promise<string> {
  const header = '# Generated from the code by `npm run schema:emit`. Do not edit by hand.\n\n';
  return header + printSchema(lexicographicSortSchema(await buildAppSchema())) + '\n';
}
