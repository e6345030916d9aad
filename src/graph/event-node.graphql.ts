import { Field, ID, ObjectType } from 'type-graphql';

@ObjectType({ description: 'An event as projected into the Neo4j graph (read through neo4j-driver).' })
export class EventNode {
  @Field(() => ID) id!: string;
  @Field(() => String) namespace!: string;
  @Field(() => String) source!: string;
  @Field(() => String, { description: 'Stored kind (message, tool_call, …).' }) kind!: string;
  @Field(() => String, { nullable: true }) conversationId!: string | null;
  @Field(() => Date) occurredAt!: Date;
  @Field(() => Date) ingestedAt!: Date;
  @Field(() => Date, { description: 'When the projector last wrote the node.' }) projectedAt!: Date;
}
