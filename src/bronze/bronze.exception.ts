export enum BronzeExceptionCode {
  BATCH_TOO_LARGE = 'BATCH_TOO_LARGE',
  EMPTY_BATCH = 'EMPTY_BATCH',
  INVALID_ARGUMENT = 'INVALID_ARGUMENT',
  INVALID_CURSOR = 'INVALID_CURSOR',
}

export class BronzeException extends Error {
  constructor(
    readonly code: BronzeExceptionCode,
    message: string,
  ) {
    super(message);
    this.name = 'BronzeException';
  }
}
