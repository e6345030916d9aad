import { Field, Float, ID, InputType, ObjectType } from 'type-graphql';
import { Fact } from '../silver/fact.graphql';

@InputType({ description: 'Narrows searchMemory. Default: current facts only (not superseded, not retired).' })
export class SearchFilter {
  @Field(() => [String], { nullable: true, description: 'Only these fact types (preference, attribute, plan, ...).' }) factTypes?: string[] | null;
  @Field(() => ID, { nullable: true, description: 'Only facts ABOUT this entity (as subject or object).' }) entityId?: string | null;
  @Field(() => Float, { nullable: true }) minImportance?: number | null;
  @Field(() => Boolean, { nullable: true, description: 'Also superseded and retired facts (with asOf: also facts no longer believed).' })
  includeSuperseded?: boolean | null;
}

@ObjectType({ description: 'One searchMemory result.' })
export class MemoryHit {
  @Field(() => Fact) fact!: Fact;
  @Field(() => Float, { description: 'Reciprocal-rank-fusion score: sum over channels of 1/(60 + rank). Higher is better; comparable within one result list only.' })
  score!: number;
  @Field(() => [String], { description: 'Which channels found it: vector, keyword, graph.' }) channels!: string[];
}
