/**
 * The most items a nested list without a page size returns per parent (`Event.facts`,
 * `Fact.sources`, `Entity.facts`, …). The request loaders (scope/request-scope.ts) cut each list there, and
 * the cost estimator (api/cost.ts) prices such a list at it, so the price is the real maximum; page
 * through the root connections for more. Here, below every layer, because services and resolvers
 * cut at it too.
 */
export const NESTED_LIST_MAX = 50;
