import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { z } from 'zod';
import { UUID } from '../common/ids';
import { assertUnreachable } from '../common/assert-unreachable';
import { ApprovalException, ApprovalExceptionCode } from './approval.exception';
import { ApprovalAction } from './approval.types';

const uuid = z
  .string()
  .regex(UUID, 'must be a UUID')
  .transform((s) => s.toLowerCase());

/** DESTROY_EVENT: exactly the event's id (bronze.destroy_event recomputes this hash from it). */
export const destroyEventParams = z.strictObject({ eventId: uuid });

/**
 * OVERWRITE_OVERLAY: another principal's overlay, and what is done to it. A REVISE names the new
 * kind and body (body omitted when the revision has none), so the approver approves that exact
 * change; a RETRACT names only the overlay. reviseOverlay/retractOverlay present the same object.
 */
export const overwriteOverlayParams = z.strictObject({
  overlayId: uuid,
  operation: z.enum(['REVISE', 'RETRACT']),
  body: z.string().max(100_000).optional(),
  kind: z.enum(['EDIT', 'ANNOTATION', 'REDACTION']).optional(),
});

/** RETAIN_BRONZE: the first day of the month before which Bronze partitions go (bronze.retain_events recomputes this hash from it). */
export const retainBronzeParams = z.strictObject({
  before: z.string().regex(/^\d{4}-(0[1-9]|1[0-2])-01$/, 'must be the first day of a month, YYYY-MM-01'),
});

export type DestroyEventParams = z.infer<typeof destroyEventParams>;
export type OverwriteOverlayParams = z.infer<typeof overwriteOverlayParams>;

/** The action's parameters, checked and normalised (ids lower-case); BAD_USER_INPUT naming what is wrong. */
export function parseApprovalParams(action: ApprovalAction, params: unknown): Record<string, unknown> {
  const schema = schemaOf(action);
  const parsed = schema.safeParse(params);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.length ? i.path.join('.') : 'params'}: ${i.message}`).join('; ');
    throw new ApprovalException(ApprovalExceptionCode.INVALID_PARAMS, `invalid params for ${action} (${problems}); expected ${EXPECTED[action]}`);
  }
  return parsed.data;
}

const EXPECTED: Record<ApprovalAction, string> = {
  [ApprovalAction.DESTROY_EVENT]: '{"eventId": "<uuid of an event in the namespace>"}',
  [ApprovalAction.OVERWRITE_OVERLAY]: '{"overlayId": "<uuid>", "body"?: string, "kind"?: "EDIT" | "ANNOTATION" | "REDACTION"}',
  [ApprovalAction.RETAIN_BRONZE]: '{"before": "YYYY-MM-01"} on namespace "*"',
};

function schemaOf(action: ApprovalAction): z.ZodType<Record<string, unknown>> {
  switch (action) {
    case ApprovalAction.DESTROY_EVENT:
      return destroyEventParams;
    case ApprovalAction.OVERWRITE_OVERLAY:
      return overwriteOverlayParams;
    case ApprovalAction.RETAIN_BRONZE:
      return retainBronzeParams;
    default:
      return assertUnreachable(action);
  }
}

/**
 * SHA-256 (hex) of the parameters' canonical JSON (RFC 8785, `canonicalize`): key order and
 * spacing do not change it. Approval and execution compare these hashes.
 */
export function paramsHash(params: Readonly<Record<string, unknown>>): string {
  const canonical = canonicalize(params);
  if (canonical === undefined) throw new Error('paramsHash: the parameters have no JSON form');
  return createHash('sha256').update(canonical, 'utf8').digest('hex');
}
