import { AppErrorKind, AppException } from '../common/app-exception';
import { assertUnreachable } from '../common/assert-unreachable';

export enum GraphExceptionCode {
  INVALID_ARGUMENT = 'INVALID_ARGUMENT',
  DEPTH_LIMIT_EXCEEDED = 'DEPTH_LIMIT_EXCEEDED',
  SUBGRAPH_TOO_LARGE = 'SUBGRAPH_TOO_LARGE',
}

function graphKind(code: GraphExceptionCode): AppErrorKind {
  switch (code) {
    case GraphExceptionCode.INVALID_ARGUMENT:
      return AppErrorKind.BAD_INPUT;
    case GraphExceptionCode.DEPTH_LIMIT_EXCEEDED:
    case GraphExceptionCode.SUBGRAPH_TOO_LARGE:
      return AppErrorKind.LIMIT_EXCEEDED;
    default:
      return assertUnreachable(code);
  }
}

/** Errors of the graph read side (search, provenance, neighbourhood, paths, exploration). */
export class GraphException extends AppException<GraphExceptionCode> {
  constructor(code: GraphExceptionCode, message: string) {
    super(code, graphKind(code), message);
    this.name = 'GraphException';
  }
}
