import { AppErrorKind, AppException } from '../../common/app-exception';
import { assertUnreachable } from '../../common/assert-unreachable';

export enum OverlayExceptionCode {
  /** The selector does not fit the text, or the input combines fields that do not go together. */
  INVALID_SELECTOR = 'INVALID_SELECTOR',
  INVALID_ARGUMENT = 'INVALID_ARGUMENT',
  /** No such overlay, fact or event in the caller's namespaces (missing and foreign look the same). */
  NOT_FOUND = 'NOT_FOUND',
  /** Another principal's overlay without an approval, or the approval gate refused it. */
  NEEDS_APPROVAL = 'NEEDS_APPROVAL',
  /** `body` or `reason` above its size limit (every read repeats them: a 2 MB body made 42 MB answers). */
  TOO_LARGE = 'TOO_LARGE',
}

function overlayKind(code: OverlayExceptionCode): AppErrorKind {
  switch (code) {
    case OverlayExceptionCode.INVALID_SELECTOR:
    case OverlayExceptionCode.INVALID_ARGUMENT:
      return AppErrorKind.BAD_INPUT;
    case OverlayExceptionCode.NOT_FOUND:
      return AppErrorKind.NOT_FOUND;
    case OverlayExceptionCode.NEEDS_APPROVAL:
      return AppErrorKind.FORBIDDEN;
    case OverlayExceptionCode.TOO_LARGE:
      return AppErrorKind.LIMIT_EXCEEDED;
    default:
      return assertUnreachable(code);
  }
}

/** Errors of human overlays (src/gold/overlay). */
export class OverlayException extends AppException<OverlayExceptionCode> {
  constructor(code: OverlayExceptionCode, message: string) {
    super(code, overlayKind(code), message);
    this.name = 'OverlayException';
  }
}
