import { MiddlewareFn } from 'type-graphql';
import { requireStorableArgs } from './input';

/** Mutations that check their items one by one (a bad item is REJECTED, the others stored). */
const CHECKED_PER_ITEM = new Set(['ingestEvent', 'ingestEvents']);

/**
 * Refuses (BAD_USER_INPUT, naming the argument) any string argument that Postgres text cannot
 * hold unchanged: NUL characters and unpaired surrogates. Without it such values reach SQL and
 * answer INTERNAL_SERVER_ERROR, or are silently rewritten to U+FFFD. Safe as a global middleware.
 */
export const StorableTextArgs: MiddlewareFn = ({ args, info }, next) => {
  if (!CHECKED_PER_ITEM.has(info.fieldName)) requireStorableArgs(args as Record<string, unknown>);
  return next();
};
