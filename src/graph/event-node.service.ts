import { Driver } from 'neo4j-driver';
import neo4j from 'neo4j-driver';
import { AuthContext } from '../access/auth-context';
import { Capability } from '../access/capability';
import { EventNode, readEventNodes } from './cypher/event-nodes';

/** Reads projected `(:Event)` nodes back from Neo4j, filtered by the caller's grants. */
export class EventNodeService {
  constructor(private readonly driver: Driver) {}

  async getVisible(auth: AuthContext, id: string): Promise<EventNode | null> {
    auth.requirePrincipal();
    const session = this.driver.session({ defaultAccessMode: neo4j.session.READ });
    try {
      const [node] = await session.executeRead((tx) => readEventNodes(tx, [id]));
      return node && auth.can(Capability.READ, node.namespace) ? node : null;
    } finally {
      await session.close();
    }
  }
}
