import { RequestContextOf } from '../access/request-context';
import { BronzeLoaders } from '../bronze/bronze.context';
import { BronzeEvent } from '../bronze/event.types';
import { ComposeSpan } from '../common/compose-text';
import { NamespacedLoader } from '../common/namespaced-loader';
import { ReembedService } from '../silver/reembed.service';
import { SilverLoaders } from '../silver/silver.context';
import { EventNodeService } from './event-node.service';
import { GraphRebuildService } from './graph-rebuild.service';
import { ProvenanceService } from './provenance.service';
import { SearchService } from './search.service';

/** The services the graph's resolvers call (the request scope holds them all). */
export interface GraphServices {
  readonly eventNodes: EventNodeService;
  readonly provenance: ProvenanceService;
  readonly search: SearchService;
  readonly reembed: ReembedService;
  /** graphConsistency: Postgres against its Neo4j projection. */
  readonly graph: GraphRebuildService;
}

/** The loaders the graph's resolvers read through: Silver's and Bronze's, and Bronze events seen from one namespace (evidence). */
export interface GraphLoaders extends Pick<SilverLoaders, 'factById' | 'entityById' | 'sourcesByFactId'>, Pick<BronzeLoaders, 'eventById'> {
  inNamespace(namespace: string): { readonly eventById: NamespacedLoader<BronzeEvent> };
  /** The events' active redactions (Gold's overlays): a search reads them ahead for its hits' content (`searchLoaders`). */
  readonly redactionsByEventId: { loadMany(ids: readonly string[]): Promise<Array<readonly ComposeSpan[] | Error>> };
}

/** The context of the graph's resolvers. */
export type GraphContext = RequestContextOf<GraphServices, GraphLoaders>;
