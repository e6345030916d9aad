import { Arg, Ctx, ID, Mutation, Query, Resolver, UseMiddleware } from 'type-graphql';
import { AccessContext } from './access.context';
import { StorableTextArgs } from '../common/storable-args.middleware';
import { ApprovalRequest, ApprovalRequestInput } from './approval.graphql';
import { ApprovalStatus } from './approval.types';

@Resolver(() => ApprovalRequest)
@UseMiddleware(StorableTextArgs)
export class ApprovalResolver {
  @Query(() => [ApprovalRequest], {
    description:
      'A namespace\'s approval requests with their history, oldest first (at most MAX_PAGE_SIZE). "approve" sees every action; "admin" or "overlay" the actions they may request.',
  })
  async approvals(
    @Arg('namespace', () => String) namespace: string,
    @Arg('status', () => ApprovalStatus, { nullable: true }) status: ApprovalStatus | null,
    @Ctx() ctx: AccessContext,
  ): Promise<ApprovalRequest[]> {
    return (await ctx.services.approvals.list(ctx.auth, namespace, status ?? null)).map(ApprovalRequest.from);
  }

  @Mutation(() => ApprovalRequest, {
    description:
      'Asks for an irreversible operation (DESTROY_EVENT: "admin"; OVERWRITE_OVERLAY: "overlay"; RETAIN_BRONZE: "admin" on "*"); expires after APPROVAL_TTL.',
  })
  async requestApproval(@Arg('input', () => ApprovalRequestInput) input: ApprovalRequestInput, @Ctx() ctx: AccessContext): Promise<ApprovalRequest> {
    return ApprovalRequest.from(await ctx.services.approvals.request(ctx.auth, input));
  }

  @Mutation(() => ApprovalRequest, { description: 'Approves a PENDING request: needs "approve" on its namespace and must not be its requester.' })
  async approve(
    @Arg('id', () => ID) id: string,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Ctx() ctx: AccessContext,
  ): Promise<ApprovalRequest> {
    return ApprovalRequest.from(await ctx.services.approvals.approve(ctx.auth, id, reason ?? null));
  }

  @Mutation(() => ApprovalRequest, { description: 'Rejects a PENDING request: needs "approve" on its namespace and must not be its requester.' })
  async reject(
    @Arg('id', () => ID) id: string,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Ctx() ctx: AccessContext,
  ): Promise<ApprovalRequest> {
    return ApprovalRequest.from(await ctx.services.approvals.reject(ctx.auth, id, reason ?? null));
  }
}
