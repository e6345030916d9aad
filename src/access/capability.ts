import { registerEnumType } from 'type-graphql';

/** What a grant allows within its namespaces. */
export enum Capability {
  INGEST = 'ingest',
  SEARCH = 'search',
  READ = 'read',
  LIST = 'list',
  OVERLAY = 'overlay',
  REVIEW = 'review',
  ADMIN = 'admin',
  APPROVE = 'approve',
}

registerEnumType(Capability, {
  name: 'Capability',
  description:
    'ingest: write events; read: fetch by id; list: enumerate and filter; search: memory search; admin: tokens, rebuilds and every capability but approve; approve: second signature on irreversible operations.',
});

export const ALL_CAPABILITIES: readonly Capability[] = Object.values(Capability);

/** `admin` implies every capability except `approve`, which must be granted on purpose. */
export function capabilityGrants(held: Capability, wanted: Capability): boolean {
  return held === wanted || (held === Capability.ADMIN && wanted !== Capability.APPROVE);
}
