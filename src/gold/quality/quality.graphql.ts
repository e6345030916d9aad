import { Field, Float, ObjectType } from 'type-graphql';
import { QualityCheckResult, QualityReportResult } from './quality.types';

@ObjectType({ description: 'One quality check of a namespace (docs/quality.md): ok when value <= threshold.' })
export class QualityCheck {
  @Field(() => String, { description: 'completeness, provenance, consistency_endpoints, consistency_graph, uniqueness, … (docs/quality.md).' })
  name!: string;
  @Field(() => Float, { description: 'What was measured: a count, a share or seconds.' }) value!: number;
  @Field(() => Float, { description: 'The largest value that passes (QUALITY_* settings).' }) threshold!: number;
  @Field(() => Boolean) ok!: boolean;
  @Field(() => String, { description: 'What the value is made of, with the first offending rows (at most QUALITY_MAX_LISTED).' }) detail!: string;

  static from(c: QualityCheckResult): QualityCheck {
    return Object.assign(new QualityCheck(), c);
  }
}

@ObjectType({
  description:
    "A namespace's Silver and Gold quality checks, measured now; consistency_graph shows the latest stored Postgres-against-Neo4j comparison, whose time and age its detail gives (docs/quality.md).",
})
export class QualityReport {
  @Field(() => String) namespace!: string;
  @Field(() => Boolean, { description: 'Every check passed.' }) ok!: boolean;
  @Field(() => Date) generatedAt!: Date;
  @Field(() => [QualityCheck]) checks!: QualityCheck[];

  static from(r: QualityReportResult): QualityReport {
    return Object.assign(new QualityReport(), { ...r, checks: r.checks.map(QualityCheck.from) });
  }
}
