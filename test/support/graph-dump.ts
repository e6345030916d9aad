import neo4j, { Driver } from 'neo4j-driver';

/** Runs a read query and returns plain records. */
export async function cypher<T = Record<string, unknown>>(driver: Driver, query: string, params: Record<string, unknown> = {}): Promise<T[]> {
  const res = await driver.executeQuery(query, params, { routing: neo4j.routing.READ });
  return res.records.map((r) => r.toObject() as T);
}

/** Neo4j values to plain JSON: temporal values as their ISO strings. */
export function plain(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (neo4j.isDateTime(v as never) || neo4j.isDate(v as never)) return String(v);
  if (Array.isArray(v)) return v.map(plain);
  if (typeof v === 'object')
    return Object.fromEntries(
      Object.entries(v as Record<string, unknown>)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, x]) => [k, plain(x)]),
    );
  return v;
}

/** Every node and edge of a namespace with their properties (projectedAt excluded: it is the write time), sorted. */
export async function dumpNamespace(driver: Driver, ns: string): Promise<{ nodes: string[]; edges: string[] }> {
  const nodes = await cypher<{ labels: string[]; props: Record<string, unknown> }>(
    driver,
    `MATCH (n) WHERE n.namespace = $ns RETURN labels(n) AS labels, properties(n) AS props`,
    { ns },
  );
  const edges = await cypher<{ from: string; type: string; to: string; props: Record<string, unknown> }>(
    driver,
    `MATCH (a)-[r]->(b) WHERE a.namespace = $ns OR b.namespace = $ns RETURN a.id AS from, type(r) AS type, b.id AS to, properties(r) AS props`,
    { ns },
  );
  const strip = (p: Record<string, unknown>) => {
    const { projectedAt: _p, ...rest } = p;
    return plain(rest);
  };
  return {
    nodes: nodes.map((n) => JSON.stringify([[...n.labels].sort(), strip(n.props)])).sort(),
    edges: edges.map((e) => JSON.stringify([e.from, e.type, e.to, strip(e.props)])).sort(),
  };
}
