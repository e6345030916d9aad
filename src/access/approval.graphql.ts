import { Field, ID, InputType, ObjectType } from 'type-graphql';
import { JsonScalar } from '../common/json-scalar';
import { ApprovalAction, ApprovalLogEntry, ApprovalStatus, ApprovalStep, ApprovalView } from './approval.types';

@InputType({ description: 'A request for an irreversible operation; a different principal holding "approve" on the namespace decides it.' })
export class ApprovalRequestInput {
  @Field(() => String) namespace!: string;
  @Field(() => ApprovalAction, {
    description:
      'DESTROY_EVENT needs "admin" on the namespace to request; OVERWRITE_OVERLAY needs "overlay"; RETAIN_BRONZE needs "admin" on "*" (its namespace is "*").',
  })
  action!: ApprovalAction;
  @Field(() => JsonScalar, {
    description:
      'DESTROY_EVENT: {"eventId": "<uuid>"} (an event of this namespace); OVERWRITE_OVERLAY: {"overlayId": "<uuid>", "body"?: String, "kind"?: "EDIT" | "ANNOTATION" | "REDACTION"}; RETAIN_BRONZE: {"before": "YYYY-MM-01"} (see bronzeRetentionPlan).',
  })
  params!: unknown;
  @Field(() => String, { description: 'Why: kept on the request, its audit log and (for DESTROY_EVENT) the tombstone.' }) reason!: string;
}

@ObjectType({ description: 'One step of an approval request, from its append-only audit log.' })
export class ApprovalHistoryEntry {
  @Field(() => ApprovalStep) step!: ApprovalStep;
  @Field(() => String, { description: 'Principal id of whoever took (or attempted) the step.' }) principalId!: string;
  @Field(() => String) principalName!: string;
  @Field(() => String, { nullable: true, description: 'The reason given, or why the attempt was refused.' }) detail!: string | null;
  @Field(() => Date) at!: Date;

  static from(e: ApprovalLogEntry): ApprovalHistoryEntry {
    return Object.assign(new ApprovalHistoryEntry(), { step: e.step, principalId: e.principalId, principalName: e.principalName, detail: e.detail, at: e.at });
  }
}

@ObjectType({ description: 'A request for an irreversible operation, with every step taken on it.' })
export class ApprovalRequest {
  @Field(() => ID) id!: string;
  @Field(() => String) namespace!: string;
  @Field(() => ApprovalAction) action!: ApprovalAction;
  @Field(() => JsonScalar, { description: 'The parameters as approved (normalised: ids lower-case).' }) params!: unknown;
  @Field(() => String, { description: 'SHA-256 (hex) of the canonical JSON (RFC 8785) of params: execution must present the same.' })
  paramsHash!: string;
  @Field(() => String, { description: "The requester's principal name." }) requestedBy!: string;
  @Field(() => String) requestedById!: string;
  @Field(() => ApprovalStatus, { description: 'EXPIRED once a PENDING or APPROVED request is past expiresAt.' }) status!: ApprovalStatus;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date, { description: 'createdAt + APPROVAL_TTL: no decision or execution after it.' }) expiresAt!: Date;
  @Field(() => String, { nullable: true, description: "The approver's (or rejecter's) principal name." }) decidedBy!: string | null;
  @Field(() => String, { nullable: true }) decidedById!: string | null;
  @Field(() => Date, { nullable: true }) decidedAt!: Date | null;
  @Field(() => String, { description: "The requester's reason." }) reason!: string;
  @Field(() => String, { nullable: true, description: "The decider's reason." }) decisionReason!: string | null;
  @Field(() => String, { nullable: true }) executedBy!: string | null;
  @Field(() => Date, { nullable: true }) executedAt!: Date | null;
  @Field(() => [ApprovalHistoryEntry], { description: 'The audit log of this request, oldest first: requested, decided, executed, and every refused attempt.' })
  history!: ApprovalHistoryEntry[];

  static from(v: ApprovalView): ApprovalRequest {
    const r = v.request;
    return Object.assign(new ApprovalRequest(), {
      id: r.id,
      namespace: r.namespace,
      action: r.action,
      params: r.params,
      paramsHash: r.paramsHash,
      requestedBy: r.requestedByName,
      requestedById: r.requestedBy,
      status: r.status,
      createdAt: r.createdAt,
      expiresAt: r.expiresAt,
      decidedBy: r.decidedByName,
      decidedById: r.decidedBy,
      decidedAt: r.decidedAt,
      reason: r.reason,
      decisionReason: r.decisionReason,
      executedBy: r.executedByName,
      executedAt: r.executedAt,
      history: v.history.map(ApprovalHistoryEntry.from),
    });
  }
}
