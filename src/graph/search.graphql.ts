import { Field, Float, ID, InputType, ObjectType, registerEnumType } from 'type-graphql';
import { Event } from '../bronze/event.graphql';
import { Fact } from '../silver/fact.graphql';
import { RRF_K } from './search-ranking';

export enum MemoryHitKind {
  FACT = 'FACT',
  EVENT = 'EVENT',
}
registerEnumType(MemoryHitKind, {
  name: 'MemoryHitKind',
  description: 'FACT: a derived Silver fact. EVENT: a raw Bronze event (a turn no fact hit carries).',
});

@InputType({ description: 'Narrows searchMemory. Default: current facts (not superseded, not retired) and raw events.' })
export class SearchFilter {
  @Field(() => [MemoryHitKind], {
    nullable: true,
    description: 'Which kinds of hit to return (default both). factTypes, entityId and minImportance imply FACT.',
  })
  kinds?: MemoryHitKind[] | null;
  @Field(() => [String], { nullable: true, description: 'Only these fact types (preference, attribute, plan, ...).' }) factTypes?: string[] | null;
  @Field(() => ID, { nullable: true, description: 'Only facts ABOUT this entity (as subject or object).' }) entityId?: string | null;
  @Field(() => Float, { nullable: true }) minImportance?: number | null;
  @Field(() => Boolean, { nullable: true, description: 'Also superseded and retired facts (with asOf: also facts no longer believed).' })
  includeSuperseded?: boolean | null;
}

@ObjectType({ description: 'One searchMemory result: a fact, or a raw event that no fact in the results carries.' })
export class MemoryHit {
  @Field(() => MemoryHitKind) kind!: MemoryHitKind;
  @Field(() => Fact, { nullable: true, description: 'Set when kind is FACT.' }) fact!: Fact | null;
  @Field(() => Event, { nullable: true, description: 'Set when kind is EVENT.' }) event!: Event | null;
  @Field(() => Float, {
    description: `Reciprocal-rank-fusion score: sum over the channels that found it of the channel's weight / (${RRF_K} + rank), with the scores of the raw events folded into a fact hit, times the hit's priors (docs/search.md). Higher is better; comparable within one result list only.`,
  })
  score!: number;
  @Field(() => [String], {
    description:
      'Which channels found it: vector, keyword, graph (over facts); event_vector, event_keyword (over raw events; on a FACT hit: its source event was found and folded into it).',
  })
  channels!: string[];
  @Field(() => [ID], {
    description:
      'Hits of this same list said at least an hour later about the same thing (their fact\'s or event\'s id): what may have updated or replaced this one, e.g. "I quit coffee, only green tea now" for "The user drinks three coffees a day". Empty when nothing on the list was said later about it. A judgement over the words of the hits (docs/search.md), not the judge\'s supersession (Fact.supersededBy).',
  })
  updatedBy!: string[];
}
