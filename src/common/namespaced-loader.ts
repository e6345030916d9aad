/**
 * A request loader seen from one namespace: a row of another namespace reads as missing. Fields
 * and tools that follow an id stored on a row (a fact's subject, a Gold entity's members, a review
 * item's facts) read through one, so none of them re-checks the namespace by hand.
 */
export interface NamespacedLoader<T> {
  /** The row, or null when it is missing or in another namespace. */
  load(id: string): Promise<T | null>;
  /** The rows found in the namespace, in the order of `ids`; misses, failures and other namespaces' rows are left out. */
  loadMany(ids: readonly string[]): Promise<T[]>;
}

/** A list loader seen from one namespace: rows of another namespace are left out. */
export interface NamespacedListLoader<K, T> {
  load(key: K): Promise<T[]>;
}

/** The slice of a DataLoader the views below read through (so they share its batch and cache). */
export interface KeyedLoad<K, V> {
  load(key: K): Promise<V>;
  loadMany(keys: readonly K[]): Promise<Array<V | Error>>;
}

/** Whether a loaded value is a row of the namespace (not a miss, not a failed key, not another namespace's row). */
export const inNamespace =
  (namespace: string) =>
  <T extends { namespace: string }>(row: T | null | undefined | Error): row is T =>
    !!row && !(row instanceof Error) && row.namespace === namespace;

/** `loader` keyed by id, seen from `namespace`. */
export function rowsIn<T extends { namespace: string }>(loader: KeyedLoad<string, T | null>, namespace: string): NamespacedLoader<T> {
  const keep = inNamespace(namespace);
  return {
    load: async (id) => {
      const row = await loader.load(id);
      return keep(row) ? row : null;
    },
    loadMany: async (ids) => (await loader.loadMany(ids)).filter(keep),
  };
}

/** `loader` of lists, seen from `namespace`: `scoped` maps a row to what the namespace may see of it, or null to leave it out. */
export function listIn<K, T>(loader: { load(key: K): Promise<T[]> }, scoped: (row: T) => T | null): NamespacedListLoader<K, T> {
  return {
    load: async (key) =>
      (await loader.load(key)).flatMap((row) => {
        const r = scoped(row);
        return r === null ? [] : [r];
      }),
  };
}
