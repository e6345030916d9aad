import { Arg, Ctx, Query, Resolver, UseMiddleware } from 'type-graphql';
import { StorableTextArgs } from '../../common/storable-args.middleware';
import { GoldContext } from '../gold.context';
import { QualityReport } from './quality.graphql';

@UseMiddleware(StorableTextArgs)
@Resolver(() => QualityReport)
export class QualityResolver {
  @Query(() => QualityReport, {
    description:
      'The quality report of a namespace (docs/quality.md): completeness, provenance, consistency (endpoints; Postgres against Neo4j), uniqueness, confidence, timeliness, dead letters, orphan Gold nodes, duplicate edges, temporal consistency, orphaned overlays. Needs "admin" on the namespace.',
  })
  async qualityReport(
    @Arg('namespace', () => String) namespace: string,
    @Arg('checks', () => [String], {
      nullable: true,
      description:
        'Only these checks (by name, kept in report order); omitted: all. consistency_graph reads every key of both stores and is the slow one (docs/quality.md, "Cost").',
    })
    checks: string[] | null,
    @Ctx() ctx: GoldContext,
  ): Promise<QualityReport> {
    return QualityReport.from(await ctx.services.quality.reportFor(ctx.auth, namespace, checks ?? null));
  }
}
