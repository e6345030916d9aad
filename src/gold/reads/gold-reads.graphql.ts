import { Field, ID, ObjectType } from 'type-graphql';
import { Fact } from '../../silver/fact.graphql';
import { GoldEntity, GoldRelationship } from '../promotion/gold.graphql';

@ObjectType({ description: 'A preference a Gold entity holds (now, or at asOf), with the facts it replaced.' })
export class Preference {
  @Field(() => Fact, {
    description: 'The preference: fact type "preference", or a predicate such as prefers / likes / dislikes, with the entity as its subject.',
  })
  fact!: Fact;
  @Field(() => [Fact], {
    description:
      'The facts it superseded, directly or through a chain of supersessions, newest first; each with its validity (validFrom, validTo) and sources.',
  })
  replaced!: Fact[];
  namespace!: string;
}

@ObjectType({ description: 'A fact of a Gold subgraph and the Gold entity of the subgraph it is about.' })
export class GoldContextFact {
  @Field(() => ID, { description: 'The Gold entity of the subgraph the fact is about (its subject or object is one of its members).' })
  entityId!: string;
  @Field(() => Fact) fact!: Fact;
}

@ObjectType({
  description:
    'Gold entities within some GOLD_RELATED hops of a topic, the Gold relationships between them, and the facts about them (each with its sources: the events).',
})
export class GoldSubgraph {
  @Field(() => String) namespace!: string;
  @Field(() => String, { description: 'The topic as asked.' }) topic!: string;
  @Field(() => GoldEntity, {
    nullable: true,
    description: 'The Gold entity the topic stands for (the name resolution of about); null when none: then the subgraph is empty.',
  })
  root!: GoldEntity | null;
  @Field(() => [GoldEntity], { description: 'Breadth first from the root, the root first. Their facts, preferences and relationships are fields of each.' })
  entities!: GoldEntity[];
  @Field(() => [GoldRelationship], { description: 'The Gold relationships between the entities, valid now or at asOf.' })
  relationships!: GoldRelationship[];
  asOf!: Date | null;
}
