/**
 * The most items a nested list without a page size returns per parent (`Event.facts`,
 * `Fact.sources`, `Entity.facts`, …). The request loaders (scope/request-scope.ts) cut each list there, and
 * the cost estimator (api/cost.ts) prices such a list at it, so the price is the real maximum; page
 * through the root connections for more. Here, below every layer, because services and resolvers
 * cut at it too.
 */
export const NESTED_LIST_MAX = 50;

/**
 * The times an event's `occurredAt` may have (bronze/event-validation.ts): Bronze partitions are
 * monthly, and these bounds keep typos (year 20025) out while allowing history and plans. A window
 * over events (`rebuildSilver(from, to)`) is refused outside them too: a bound there selects
 * nothing more, and Postgres cannot read some of those years back from a job's stored payload
 * (year 0 failed the job with a raw "date/time field value out of range").
 */
export const OCCURRED_AT_MIN = new Date(Date.UTC(1900, 0, 1));
export const OCCURRED_AT_MAX = new Date(Date.UTC(2200, 0, 1));

/** The longest reason a job request keeps (rebuildSilver, rebuildGraph, reembed, promote), as an approval's. */
export const MAX_JOB_REASON = 2_000;
