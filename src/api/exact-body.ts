import type { IncomingMessage } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { mayHoldUnsafeIntegers, parseJsonExact } from '../common/exact-json';

const RAW = Symbol('medallion.rawJsonBody');
type WithRaw = IncomingMessage & { [RAW]?: string };

/**
 * `verify` hook for express.json: keeps the body text when it may hold integers beyond ±2^53
 * (a run of 16+ digits), so that `exactJsonBody` can parse it again without rounding them.
 */
export function keepBodyTextWhenUnsafe(req: IncomingMessage, _res: unknown, buf: Buffer, encoding: string): void {
  const text = buf.toString((encoding || 'utf8') as BufferEncoding);
  if (mayHoldUnsafeIntegers(text)) (req as WithRaw)[RAW] = text;
}

/**
 * Replaces the body parsed by express.json with one whose integers beyond ±2^53 are exact
 * (LosslessNumber), so a raw payload is stored as the client sent it. Runs only for bodies the
 * verify hook kept; the body is already known to be valid JSON.
 */
export function exactJsonBody(req: Request, _res: Response, next: NextFunction): void {
  const raw = (req as unknown as WithRaw)[RAW];
  if (raw !== undefined) {
    req.body = parseJsonExact(raw);
    delete (req as unknown as WithRaw)[RAW];
  }
  next();
}
