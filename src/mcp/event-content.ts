import { BronzeEvent } from '../bronze/event.types';
import { ToolScope } from './tool-kit';

/** Events as this caller may see them: redacted spans hidden unless they hold "admin" (as GraphQL's Event.content). */
export async function asSeen(scope: ToolScope, events: readonly BronzeEvent[]): Promise<BronzeEvent[]> {
  const { auth, ctx } = scope;
  const redactions = await ctx.loaders.redactionsByEventId.loadMany(events.map((e) => e.id));
  return events.map((e, i) => {
    const spans = redactions[i];
    if (!Array.isArray(spans)) throw spans instanceof Error ? spans : new Error(`redactions of event ${e.id} missing`);
    const content = ctx.services.overlays.eventContent(auth, e, spans);
    return content === e.content ? e : { ...e, content };
  });
}
