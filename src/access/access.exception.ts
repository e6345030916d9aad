export enum AccessExceptionCode {
  UNAUTHENTICATED = 'UNAUTHENTICATED',
  FORBIDDEN = 'FORBIDDEN',
  INVALID_GRANT = 'INVALID_GRANT',
  TOKEN_NOT_FOUND = 'TOKEN_NOT_FOUND',
}

export class AccessException extends Error {
  constructor(
    readonly code: AccessExceptionCode,
    message: string,
  ) {
    super(message);
    this.name = 'AccessException';
  }
}
