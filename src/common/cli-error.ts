/** A problem the person running the CLI can fix: printed as its message alone, no stack trace. */
export class CliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliError';
  }
}
