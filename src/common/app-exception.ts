import { assertUnreachable } from './assert-unreachable';

/**
 * What went wrong, in terms every layer shares. Each layer's exception names its own reason
 * (`BronzeExceptionCode.BATCH_TOO_LARGE`) and says which kind it is; `api/errors.ts` (and, next,
 * the MCP server) turns the kind into its transport's code in one exhaustive switch.
 */
export enum AppErrorKind {
  /** The caller sent something the service cannot use: a malformed id, a bad range, an unknown cursor. */
  BAD_INPUT = 'BAD_INPUT',
  UNAUTHENTICATED = 'UNAUTHENTICATED',
  FORBIDDEN = 'FORBIDDEN',
  NOT_FOUND = 'NOT_FOUND',
  CONFLICT = 'CONFLICT',
  /** Within the rules, but above a configured limit (size, depth, count). */
  LIMIT_EXCEEDED = 'LIMIT_EXCEEDED',
}

/** The base of every exception a caller may see: a layer's reason code, its kind and a message that tells the caller what to do. */
export abstract class AppException<C extends string = string> extends Error {
  protected constructor(
    readonly code: C,
    readonly kind: AppErrorKind,
    message: string,
  ) {
    super(message);
  }
}

/** Reasons of the checks shared by every layer (common/input.ts, common/cursor.ts). */
export enum InputExceptionCode {
  INVALID_ARGUMENT = 'INVALID_ARGUMENT',
  INVALID_CURSOR = 'INVALID_CURSOR',
  /** A text argument longer than its limit. */
  TOO_LONG = 'TOO_LONG',
}

function inputKind(code: InputExceptionCode): AppErrorKind {
  switch (code) {
    case InputExceptionCode.INVALID_ARGUMENT:
    case InputExceptionCode.INVALID_CURSOR:
      return AppErrorKind.BAD_INPUT;
    case InputExceptionCode.TOO_LONG:
      return AppErrorKind.LIMIT_EXCEEDED;
    default:
      return assertUnreachable(code);
  }
}

/** A malformed argument caught by a shared check (ids, storable text, page cursors). */
export class InputException extends AppException<InputExceptionCode> {
  constructor(code: InputExceptionCode, message: string) {
    super(code, inputKind(code), message);
    this.name = 'InputException';
  }
}
