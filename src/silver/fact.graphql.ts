import { Field, Float, ID, InputType, Int, ObjectType } from 'type-graphql';
import { ConnectionPageInfo } from '../bronze/event.graphql';
import { Entity as EntityRow, Fact as FactRow, JudgeDecisionRow, Relationship as RelationshipRow } from './silver.types';

@ObjectType({ description: 'An atomic fact derived from events, with world time (valid*) and system time (recorded/retired).' })
export class Fact {
  @Field(() => ID) id!: string;
  @Field(() => String) namespace!: string;
  @Field(() => String, {
    description: 'Self-contained statement, as people see it: the Silver text with the human overlays applied (machineStatement is the Silver text).',
  })
  statement!: string;
  @Field(() => String, { description: 'preference | attribute | relationship | event | plan | other' }) factType!: string;
  @Field(() => String, { nullable: true }) predicate!: string | null;
  @Field(() => String, { nullable: true, description: 'The object as text (objectEntity when it is an entity).' })
  get object(): string | null {
    return this.objectValue;
  }
  objectValue!: string | null;
  subjectEntityId!: string | null;
  objectEntityId!: string | null;
  supersededById!: string | null;
  derivationRunId!: string;
  /** The Silver text (GraphQL field in FactOverlayResolver); `statement` has the overlays applied. */
  machineStatement?: string;
  @Field(() => Boolean) isNegation!: boolean;
  @Field(() => Float) confidence!: number;
  @Field(() => Float) importance!: number;
  @Field(() => Date, { description: 'When it became true in the world.' }) validFrom!: Date;
  @Field(() => Date, { nullable: true, description: 'When it stopped being true (set when superseded).' }) validTo!: Date | null;
  @Field(() => Date, { description: 'When the engine recorded it.' }) recordedAt!: Date;
  @Field(() => Date, { nullable: true, description: 'When the engine stopped believing it (UPDATE, rebuild).' }) retiredAt!: Date | null;
  @Field(() => String) extractionModel!: string;
  @Field(() => String, {
    nullable: true,
    description:
      "Why the engine stopped believing it: 'pruned' (decayed and unused; restorePruned brings it back), 'duplicate' (a pruned twin came back instead), 'rebuild', 'update' (a better statement replaced it), 'erasure'; null when current or retired before reasons were recorded.",
  })
  retiredReason!: string | null;
  @Field(() => Float, {
    description: 'Importance after decay (docs/lifecycle.md), as the decay job last computed it; the base importance before its first run.',
  })
  get effectiveImportance(): number {
    return this.decayedImportance ?? this.importance;
  }
  decayedImportance!: number | null;

  static from(f: FactRow): Fact {
    const { effectiveImportance, ...rest } = f;
    return Object.assign(new Fact(), { ...rest, retiredReason: f.retiredReason ?? null, decayedImportance: effectiveImportance ?? null });
  }
}

@ObjectType({ description: 'Where a fact comes from: an event and the span of its content.' })
export class FactSource {
  eventId!: string;
  @Field(() => Int, { nullable: true, description: 'UTF-16 offset into the event content (JavaScript string index).' }) spanStart!: number | null;
  @Field(() => Int, { nullable: true }) spanEnd!: number | null;
  @Field(() => String, { nullable: true, description: 'content.slice(spanStart, spanEnd)' }) quote!: string | null;
}

@ObjectType()
export class Entity {
  @Field(() => ID) id!: string;
  @Field(() => String) namespace!: string;
  @Field(() => String) type!: string;
  @Field(() => String) name!: string;
  @Field(() => [String]) aliases!: string[];
  @Field(() => Date) recordedAt!: Date;
  @Field(() => Date, { nullable: true }) retiredAt!: Date | null;

  static from(e: EntityRow): Entity {
    return Object.assign(new Entity(), e);
  }
}

@ObjectType()
export class Relationship {
  @Field(() => ID) id!: string;
  @Field(() => String) type!: string;
  sourceEntityId!: string;
  targetEntityId!: string;
  @Field(() => Date) validFrom!: Date;
  @Field(() => Date, { nullable: true }) validTo!: Date | null;
  @Field(() => Float) confidence!: number;

  static from(r: RelationshipRow): Relationship {
    return Object.assign(new Relationship(), r);
  }
}

@ObjectType()
export class DecisionCandidate {
  @Field(() => ID) id!: string;
  @Field(() => String) statement!: string;
  @Field(() => Float) similarity!: number;
}

@ObjectType({ description: "A judge's decision: why a fact was added, or how it changed an older one." })
export class JudgeDecision {
  @Field(() => ID) id!: string;
  @Field(() => String, { description: 'ADD | UPDATE | SUPERSEDE | SKIP' }) action!: string;
  @Field(() => String, { description: 'The new statement judged.' }) statement!: string;
  @Field(() => String, {
    description:
      'Why, as the judge gave it. It may quote the facts the decision names (the fact, its target, the candidates), so it follows their visibility: "[redacted]" while one of them has an active redaction, "[erased]" once an erasure scrubbed one.',
  })
  reason!: string;
  @Field(() => ID, { nullable: true, description: 'The fact created (null for SKIP).' }) factId!: string | null;
  @Field(() => ID, { nullable: true, description: 'The older fact affected or corroborated.' }) targetFactId!: string | null;
  @Field(() => [DecisionCandidate], { description: 'What the judge saw.' }) candidates!: DecisionCandidate[];
  @Field(() => String) judgeModel!: string;
  @Field(() => Date) decidedAt!: Date;

  static from(d: JudgeDecisionRow): JudgeDecision {
    return Object.assign(new JudgeDecision(), d, { candidates: d.candidates.map((c) => Object.assign(new DecisionCandidate(), c)) });
  }
}

@ObjectType()
export class FactSupersession {
  @Field(() => Fact) old!: Fact;
  @Field(() => Fact, { name: 'new' }) newFact!: Fact;
}

@InputType()
export class FactFilter {
  @Field(() => [String], { nullable: true }) factTypes?: string[] | null;
  @Field(() => ID, { nullable: true }) subjectEntityId?: string | null;
  @Field(() => String, { nullable: true }) predicate?: string | null;
  @Field(() => String, { nullable: true, description: 'Case-insensitive substring of the statement.' }) contains?: string | null;
  @Field(() => Float, { nullable: true }) minImportance?: number | null;
}

@ObjectType()
export class FactEdge {
  @Field(() => String) cursor!: string;
  @Field(() => Fact) node!: Fact;
}

@ObjectType()
export class FactConnection {
  @Field(() => [FactEdge]) edges!: FactEdge[];
  @Field(() => ConnectionPageInfo) pageInfo!: ConnectionPageInfo;
}

@InputType()
export class EntityFilter {
  @Field(() => String, { nullable: true }) type?: string | null;
  @Field(() => String, { nullable: true, description: 'Case-insensitive substring of the name or an alias.' }) nameContains?: string | null;
}

@ObjectType()
export class EntityEdge {
  @Field(() => String) cursor!: string;
  @Field(() => Entity) node!: Entity;
}

@ObjectType()
export class EntityConnection {
  @Field(() => [EntityEdge]) edges!: EntityEdge[];
  @Field(() => ConnectionPageInfo) pageInfo!: ConnectionPageInfo;
}
