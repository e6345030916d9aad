import { AppErrorKind, AppException } from '../common/app-exception';
import { assertUnreachable } from '../common/assert-unreachable';

export enum SilverExceptionCode {
  INVALID_ARGUMENT = 'INVALID_ARGUMENT',
  /** A fact or job the caller subscribed to is no longer readable when it is delivered. */
  NOT_READABLE = 'NOT_READABLE',
}

function silverKind(code: SilverExceptionCode): AppErrorKind {
  switch (code) {
    case SilverExceptionCode.INVALID_ARGUMENT:
      return AppErrorKind.BAD_INPUT;
    case SilverExceptionCode.NOT_READABLE:
      return AppErrorKind.NOT_FOUND;
    default:
      return assertUnreachable(code);
  }
}

/** Errors of the Silver read side and the pipeline (facts, entities, rebuilds). */
export class SilverException extends AppException<SilverExceptionCode> {
  constructor(code: SilverExceptionCode, message: string) {
    super(code, silverKind(code), message);
    this.name = 'SilverException';
  }
}
