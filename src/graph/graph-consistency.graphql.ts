import { Field, Int, ObjectType } from 'type-graphql';

@ObjectType()
export class GraphCount {
  @Field(() => String, { description: 'Node label or relationship type.' }) kind!: string;
  @Field(() => Int) postgres!: number;
  @Field(() => Int) neo4j!: number;
}

@ObjectType({ description: 'Postgres (the truth) against its Neo4j projection, for one namespace.' })
export class GraphConsistencyReport {
  @Field(() => String) namespace!: string;
  @Field(() => Boolean) ok!: boolean;
  @Field(() => [GraphCount]) counts!: GraphCount[];
  @Field(() => [String], { description: 'Kind:key present in Postgres, missing in Neo4j (capped).' }) missingInNeo4j!: string[];
  @Field(() => [String], { description: 'Kind:key in Neo4j with no Postgres source (capped).' }) extraInNeo4j!: string[];
}
