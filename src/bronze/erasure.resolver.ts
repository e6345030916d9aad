import { Arg, Ctx, ID, Mutation, Resolver } from 'type-graphql';
import { BronzeContext } from './bronze.context';
import { Event } from './event.graphql';

@Resolver(() => Event)
export class ErasureResolver {
  @Mutation(() => Event, {
    description:
      'Erases one event\'s content and payload (legal erasure) under an APPROVED DESTROY_EVENT request for it (single use; needs "admin" on the namespace). Leaves a tombstone (destroyedAt, key, checksum), retires and scrubs the facts resting only on it, drops it from the others, and removes it from the graph and search. See docs/approvals.md.',
  })
  async destroyEvent(@Arg('eventId', () => ID) eventId: string, @Arg('approvalId', () => ID) approvalId: string, @Ctx() ctx: BronzeContext): Promise<Event> {
    ctx.loaders.eventById.clear(eventId);
    return Event.from((await ctx.services.erasure.destroyEvent(ctx.auth, eventId, approvalId)).event);
  }
}
