import { GoldGraphSource } from '../../graph/graph-rebuild.service';
import { goldKeys, toGoldEntityNode, toGoldRelationshipEdge } from './gold-projection.job';
import { PromotionRepository } from './promotion.repository';

/** Gold's rows for a graph rebuild and its consistency check (the graph's port, handed in by src/app/app.ts). */
export function goldGraphSource(gold: PromotionRepository): GoldGraphSource {
  return {
    entitiesPage: async (c) => (await gold.goldEntitiesPage(c.namespace, c.after, c.limit)).map(toGoldEntityNode),
    relationshipsPage: async (c) => (await gold.goldRelationshipsPage(c.namespace, c.after, c.limit)).map(toGoldRelationshipEdge),
    keys: async (namespace) => goldKeys(await gold.goldEntities(namespace), await gold.goldRelationships(namespace)),
  };
}
