import { AppErrorKind, AppException } from '../common/app-exception';
import { assertUnreachable } from '../common/assert-unreachable';

export enum BronzeExceptionCode {
  BATCH_TOO_LARGE = 'BATCH_TOO_LARGE',
  EMPTY_BATCH = 'EMPTY_BATCH',
  INVALID_ARGUMENT = 'INVALID_ARGUMENT',
  /** An event the caller subscribed to is no longer readable when it is delivered. */
  NOT_READABLE = 'NOT_READABLE',
}

function bronzeKind(code: BronzeExceptionCode): AppErrorKind {
  switch (code) {
    case BronzeExceptionCode.BATCH_TOO_LARGE:
      return AppErrorKind.LIMIT_EXCEEDED;
    case BronzeExceptionCode.EMPTY_BATCH:
    case BronzeExceptionCode.INVALID_ARGUMENT:
      return AppErrorKind.BAD_INPUT;
    case BronzeExceptionCode.NOT_READABLE:
      return AppErrorKind.NOT_FOUND;
    default:
      return assertUnreachable(code);
  }
}

/** Errors of the Bronze layer (ingest, event reads); only code in src/bronze/ throws them. */
export class BronzeException extends AppException<BronzeExceptionCode> {
  constructor(code: BronzeExceptionCode, message: string) {
    super(code, bronzeKind(code), message);
    this.name = 'BronzeException';
  }
}
