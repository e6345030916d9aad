import { AppErrorKind, AppException } from '../common/app-exception';
import { assertUnreachable } from '../common/assert-unreachable';

export enum GoldExceptionCode {
  INVALID_ARGUMENT = 'INVALID_ARGUMENT',
  NOT_FOUND = 'NOT_FOUND',
  /** A review item decided already (resolveReview): items are decided once. */
  ALREADY_DECIDED = 'ALREADY_DECIDED',
  /** A Gold subgraph (relatedContext) would hold more entities or relationships than MAX_SUBGRAPH_NODES / MAX_SUBGRAPH_EDGES. */
  SUBGRAPH_TOO_LARGE = 'SUBGRAPH_TOO_LARGE',
}

function goldKind(code: GoldExceptionCode): AppErrorKind {
  switch (code) {
    case GoldExceptionCode.INVALID_ARGUMENT:
      return AppErrorKind.BAD_INPUT;
    case GoldExceptionCode.NOT_FOUND:
      return AppErrorKind.NOT_FOUND;
    case GoldExceptionCode.ALREADY_DECIDED:
      return AppErrorKind.CONFLICT;
    case GoldExceptionCode.SUBGRAPH_TOO_LARGE:
      return AppErrorKind.LIMIT_EXCEEDED;
    default:
      return assertUnreachable(code);
  }
}

/** Errors of Gold promotion and its reads (promote, split, goldEntity, the review queue). */
export class GoldException extends AppException<GoldExceptionCode> {
  constructor(code: GoldExceptionCode, message: string) {
    super(code, goldKind(code), message);
    this.name = 'GoldException';
  }
}
