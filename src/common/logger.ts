import pino, { Logger } from 'pino';

export type AppLogger = Logger;

/** JSON logs on stderr, so stdout stays free for CLI output (e.g. the generated admin token). */
export function createLogger(level: string, name = 'medallion'): AppLogger {
  return pino({ name, level }, pino.destination(2));
}

/** The part of a logger that lower floors write structured lines to (fields first, then the message; pino's order). */
export interface StructuredLog {
  info(fields: Record<string, unknown>, msg: string): void;
  warn(fields: Record<string, unknown>, msg: string): void;
}
