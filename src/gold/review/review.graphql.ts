import { Field, ID, ObjectType } from 'type-graphql';
import { ConnectionPageInfo } from '../../bronze/event.graphql';
import { ReviewItemRow } from './review.repository';

@ObjectType({ description: 'A conflict among the facts of a Gold entity that promotion did not decide: it waits for a reviewer (resolveReview).' })
export class ReviewItem {
  @Field(() => ID) id!: string;
  @Field(() => String) namespace!: string;
  @Field(() => String, { description: 'value_conflict (different values of one predicate) or negation_conflict (a fact and its negation).' })
  kind!: string;
  @Field(() => String, { description: 'The rule that would apply: recency (preferences), frequency (factual claims) or negation.' })
  rule!: string;
  @Field(() => String, { description: 'Why it was not decided: low confidence, a tie, or the rules disagree (names fact ids, dates, counts).' })
  reason!: string;
  @Field(() => String, { description: 'PENDING, RESOLVED or DISMISSED.' }) status!: string;
  @Field(() => Date) createdAt!: Date;
  @Field(() => String, { nullable: true, description: 'The token id of the reviewer.' }) decidedBy!: string | null;
  @Field(() => Date, { nullable: true }) decidedAt!: Date | null;
  @Field(() => String, { nullable: true, description: 'KEEP:<factId>, KEEP_ALL or DISMISS.' }) decision!: string | null;
  @Field(() => String, { nullable: true }) note!: string | null;
  goldEntityId!: string;
  silverEntityIds!: string[];
  factIds!: string[];

  static from(r: ReviewItemRow): ReviewItem {
    return Object.assign(new ReviewItem(), r);
  }
}

@ObjectType()
export class ReviewItemEdge {
  @Field(() => String) cursor!: string;
  @Field(() => ReviewItem) node!: ReviewItem;
}

@ObjectType()
export class ReviewItemConnection {
  @Field(() => [ReviewItemEdge]) edges!: ReviewItemEdge[];
  @Field(() => ConnectionPageInfo) pageInfo!: ConnectionPageInfo;
}
