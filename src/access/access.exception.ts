import { AppErrorKind, AppException } from '../common/app-exception';
import { assertUnreachable } from '../common/assert-unreachable';

export enum AccessExceptionCode {
  UNAUTHENTICATED = 'UNAUTHENTICATED',
  FORBIDDEN = 'FORBIDDEN',
  INVALID_GRANT = 'INVALID_GRANT',
  TOKEN_NOT_FOUND = 'TOKEN_NOT_FOUND',
}

function accessKind(code: AccessExceptionCode): AppErrorKind {
  switch (code) {
    case AccessExceptionCode.UNAUTHENTICATED:
      return AppErrorKind.UNAUTHENTICATED;
    case AccessExceptionCode.FORBIDDEN:
      return AppErrorKind.FORBIDDEN;
    case AccessExceptionCode.INVALID_GRANT:
      return AppErrorKind.BAD_INPUT;
    case AccessExceptionCode.TOKEN_NOT_FOUND:
      return AppErrorKind.NOT_FOUND;
    default:
      return assertUnreachable(code);
  }
}

export class AccessException extends AppException<AccessExceptionCode> {
  constructor(code: AccessExceptionCode, message: string) {
    super(code, accessKind(code), message);
    this.name = 'AccessException';
  }
}
