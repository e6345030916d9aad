export enum GraphExceptionCode {
  INVALID_ARGUMENT = 'INVALID_ARGUMENT',
  DEPTH_LIMIT_EXCEEDED = 'DEPTH_LIMIT_EXCEEDED',
  SUBGRAPH_TOO_LARGE = 'SUBGRAPH_TOO_LARGE',
}

/** Errors of the graph read side (provenance, neighbourhood, paths); mapped to API codes in api/errors.ts. */
export class GraphException extends Error {
  constructor(
    readonly code: GraphExceptionCode,
    message: string,
  ) {
    super(message);
    this.name = 'GraphException';
  }
}
