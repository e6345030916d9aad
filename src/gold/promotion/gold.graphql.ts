import { Field, Float, ID, InputType, Int, ObjectType } from 'type-graphql';
import { ConnectionPageInfo } from '../../bronze/event.graphql';
import { GoldEntityRow, GoldRelationshipRow } from './promotion.repository';

@ObjectType({ description: 'A resolved entity: one or more Silver entities (mergedFrom) promoted to Gold.' })
export class GoldEntity {
  @Field(() => ID) id!: string;
  @Field(() => String) namespace!: string;
  @Field(() => String) type!: string;
  @Field(() => String, { description: 'The name of its best-attested Silver member.' }) name!: string;
  @Field(() => [String], { description: 'Every other name and alias of its members.' }) aliases!: string[];
  @Field(() => Float, { description: 'The highest confidence among its members.' }) confidence!: number;
  @Field(() => Int, { description: 'Distinct source events of its members.' }) sourceCount!: number;
  @Field(() => Int, { description: 'Moves on with every change (merge, split, new content).' }) version!: number;
  @Field(() => Date) promotedAt!: Date;
  @Field(() => Date, { nullable: true, description: 'Set when every member was retired (soft; a returning member revives it).' }) retiredAt!: Date | null;
  @Field(() => String, {
    nullable: true,
    description:
      "Why it was retired: 'pruned' (its facts decayed and were pruned; restorePruned brings it back, docs/lifecycle.md) or why promotion retired it.",
  })
  retiredReason!: string | null;
  memberIds!: string[];
  /** The asOf the entity was asked about with (about(asOf)): the default of facts(asOf) and relationships(asOf). */
  asOf?: Date | null;

  static from(g: GoldEntityRow): GoldEntity {
    return Object.assign(new GoldEntity(), { ...g, retiredReason: g.retiredReason ?? null });
  }
}

@ObjectType({ description: 'A relationship between Gold entities, aggregated from Silver relationships.' })
export class GoldRelationship {
  @Field(() => ID) id!: string;
  @Field(() => String) namespace!: string;
  @Field(() => String) type!: string;
  @Field(() => Float) confidence!: number;
  @Field(() => Date) validFrom!: Date;
  @Field(() => Date, { nullable: true }) validTo!: Date | null;
  @Field(() => Int) sourceCount!: number;
  @Field(() => Int) version!: number;
  sourceGoldId!: string;
  targetGoldId!: string;
  silverIds!: string[];

  static from(r: GoldRelationshipRow): GoldRelationship {
    return Object.assign(new GoldRelationship(), r);
  }
}

@InputType()
export class GoldEntityFilter {
  @Field(() => String, { nullable: true }) type?: string | null;
  @Field(() => String, { nullable: true, description: 'Case-insensitive substring of the name or an alias.' }) nameContains?: string | null;
  @Field(() => Boolean, { nullable: true, description: 'Include retired Gold entities (default false).' }) includeRetired?: boolean | null;
}

@ObjectType()
export class GoldEntityEdge {
  @Field(() => String) cursor!: string;
  @Field(() => GoldEntity) node!: GoldEntity;
}

@ObjectType()
export class GoldEntityConnection {
  @Field(() => [GoldEntityEdge]) edges!: GoldEntityEdge[];
  @Field(() => ConnectionPageInfo) pageInfo!: ConnectionPageInfo;
}
