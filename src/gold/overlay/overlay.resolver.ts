import { Arg, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root, UseMiddleware } from 'type-graphql';
import { GoldContext } from '../gold.context';
import { Event } from '../../bronze/event.graphql';
import { StorableTextArgs } from '../../common/storable-args.middleware';
import { Fact } from '../../silver/fact.graphql';
import { visibleEventContent, visibleMachineStatement, visibleOverlayText, visibleTextHash } from '../../access/text-visibility';
import { Overlay, OverlayInput, QuoteSelector } from './overlay.graphql';

@Resolver(() => Overlay)
@UseMiddleware(StorableTextArgs)
export class OverlayResolver {
  @Query(() => [Overlay], { description: 'Overlays ever placed on a fact, at their latest version, orphans and retractions included (needs "read").' })
  async overlays(@Arg('factId', () => ID) factId: string, @Ctx() ctx: GoldContext): Promise<Overlay[]> {
    return (await ctx.services.overlays.forFact(ctx.auth, factId)).map(Overlay.from);
  }

  @Query(() => [Overlay], {
    description: 'Overlays of a namespace waiting for a person: re-anchored with low confidence, or orphaned by a rebuild (needs "review" or "overlay").',
  })
  async overlaysForReview(@Arg('namespace', () => String) namespace: string, @Ctx() ctx: GoldContext): Promise<Overlay[]> {
    return (await ctx.services.overlays.needingReview(ctx.auth, namespace)).map(Overlay.from);
  }

  @Mutation(() => Overlay, { description: 'Adds an EDIT, ANNOTATION or REDACTION (needs "overlay"). It applies on every read path at once.' })
  async addOverlay(@Arg('input', () => OverlayInput) input: OverlayInput, @Ctx() ctx: GoldContext): Promise<Overlay> {
    const o = Overlay.from(await ctx.services.overlays.add(ctx.auth, input));
    clearFact(ctx, o);
    return o;
  }

  @Mutation(() => Overlay, {
    description:
      'A new version of an overlay (needs "overlay"). Another principal\'s overlay needs approvalId: an approved OVERWRITE_OVERLAY request (requestApproval).',
  })
  async reviseOverlay(
    @Arg('id', () => ID) id: string,
    @Arg('input', () => OverlayInput) input: OverlayInput,
    @Arg('approvalId', () => ID, { nullable: true }) approvalId: string | null,
    @Ctx() ctx: GoldContext,
  ): Promise<Overlay> {
    const o = Overlay.from(await ctx.services.overlays.revise(ctx.auth, id, input, approvalId ?? null));
    clearFact(ctx, o);
    return o;
  }

  @Mutation(() => Overlay, {
    description: 'Withdraws an overlay (a RETRACTED version; needs "overlay"). Another principal\'s overlay needs approvalId (OVERWRITE_OVERLAY).',
  })
  async retractOverlay(
    @Arg('id', () => ID) id: string,
    @Arg('approvalId', () => ID, { nullable: true }) approvalId: string | null,
    @Ctx() ctx: GoldContext,
  ): Promise<Overlay> {
    const o = Overlay.from(await ctx.services.overlays.retract(ctx.auth, id, approvalId ?? null));
    clearFact(ctx, o);
    return o;
  }
}

/** After a write, this operation's loaders must not serve the text from before it. */
function clearFact(ctx: GoldContext, o: Overlay): void {
  if (o.factId) {
    ctx.loaders.factById.clear(o.factId);
    ctx.loaders.overlaysByFactId.clear(o.factId);
  }
  if (o.eventId) ctx.loaders.redactionsByEventId.clear(o.eventId);
}

@Resolver(() => Fact)
export class FactOverlayResolver {
  @FieldResolver(() => String, {
    nullable: true,
    description:
      'The Silver text, as the engine derived it (statement is this text with the overlays applied). Needs "admin" on the namespace (it shows what a redaction hides); null otherwise.',
  })
  machineStatement(@Root() f: Fact, @Ctx() ctx: GoldContext): string | null {
    return visibleMachineStatement(ctx.auth, f);
  }

  @FieldResolver(() => [Overlay], { description: 'Overlays on this fact at their latest version (needs "read"; empty otherwise).' })
  async overlays(@Root() f: Fact, @Ctx() ctx: GoldContext): Promise<Overlay[]> {
    if (!ctx.services.silver.mayTraverse(ctx.auth, f)) return [];
    return (await ctx.loaders.overlaysByFactId.load(f.id)).map(Overlay.from);
  }
}

@Resolver(() => Event)
export class EventContentResolver {
  @FieldResolver(() => String, { description: 'Stored verbatim; spans redacted by an overlay show as [redacted] unless you hold "admin" on the namespace.' })
  async content(@Root() e: Event, @Ctx() ctx: GoldContext): Promise<string> {
    return visibleEventContent(ctx.auth, e, await ctx.loaders.redactionsByEventId.load(e.id));
  }
}

/**
 * An overlay's selector and body quote the machine text: on a target with an active redaction
 * only "admin" and the overlay's author see them (text-visibility.ts).
 */
@Resolver(() => Overlay)
export class OverlayTextResolver {
  @FieldResolver(() => QuoteSelector, {
    description:
      'Where it sits. On a fact or event with an active redaction, exact/prefix/suffix show "[redacted]" unless you hold "admin" or wrote the overlay.',
  })
  async selector(@Root() o: Overlay, @Ctx() ctx: GoldContext): Promise<QuoteSelector> {
    return Object.assign(new QuoteSelector(), (await shown(ctx, o)).selector);
  }

  @FieldResolver(() => String, {
    nullable: true,
    description: 'EDIT: the replacement; ANNOTATION: the note; REDACTION: null. "[redacted]" on a redacted target unless you hold "admin" or wrote it.',
  })
  async body(@Root() o: Overlay, @Ctx() ctx: GoldContext): Promise<string | null> {
    return (await shown(ctx, o)).body;
  }

  @FieldResolver(() => String, {
    nullable: true,
    description:
      'SHA-256 (hex, UTF-8) of the Silver text the selector was placed on, to tell whether it changed since: shown with that text (machineStatement), to holders of "admin" on the namespace; null for everyone else (it would confirm a guess of the text).',
  })
  textHash(@Root() o: Overlay, @Ctx() ctx: GoldContext): string | null {
    return visibleTextHash(ctx.auth, o);
  }
}

async function shown(ctx: GoldContext, o: Overlay): Promise<Overlay> {
  return visibleOverlayText(ctx.auth, o, await targetRedacted(ctx, o));
}

/** Whether the overlay's fact or event has an active redaction (one of the request's loaders). */
async function targetRedacted(ctx: GoldContext, o: Overlay): Promise<boolean> {
  if (o.eventId) return (await ctx.loaders.redactionsByEventId.load(o.eventId)).length > 0;
  if (!o.factId) return false;
  return (await ctx.loaders.overlaysByFactId.load(o.factId)).some(
    (r) => r.kind === 'REDACTION' && r.factId === o.factId && (r.status === 'ANCHORED' || r.status === 'REANCHORED'),
  );
}
