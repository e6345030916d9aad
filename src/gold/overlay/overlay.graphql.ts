import { Field, Float, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import { OverlayRecord } from './overlay.types';

export enum OverlayKind {
  EDIT = 'EDIT',
  ANNOTATION = 'ANNOTATION',
  REDACTION = 'REDACTION',
}
registerEnumType(OverlayKind, {
  name: 'OverlayKind',
  description: 'EDIT: replace the span with body. ANNOTATION: a note on the span (text unchanged). REDACTION: hide the span ("[redacted]").',
});

export enum OverlayStatusKind {
  ANCHORED = 'ANCHORED',
  REANCHORED = 'REANCHORED',
  ORPHANED = 'ORPHANED',
  RETRACTED = 'RETRACTED',
}
registerEnumType(OverlayStatusKind, {
  name: 'OverlayStatus',
  description:
    'ANCHORED: placed by a person. REANCHORED: moved by a rebuild onto the re-derived fact (anchorConfidence says how sure). ORPHANED: a rebuild could not place it; kept and listed for review, not applied. RETRACTED: withdrawn, kept as history.',
});

@ObjectType({
  description: 'Where an overlay sits: a W3C-style quote selector. Offsets are UTF-16 code units (JavaScript string indexes) into the Silver text.',
})
export class QuoteSelector {
  @Field(() => String, { description: 'The quoted text: text.slice(start, end).' }) exact!: string;
  @Field(() => String, { description: 'Up to 32 code units before the span.' }) prefix!: string;
  @Field(() => String, { description: 'Up to 32 code units after the span.' }) suffix!: string;
  @Field(() => Int) start!: number;
  @Field(() => Int) end!: number;
}

@ObjectType({ description: "A person's edit, note or redaction of a span of a fact's statement (or a redaction of an event's content). Humans win on read." })
export class Overlay {
  @Field(() => ID) id!: string;
  @Field(() => String) namespace!: string;
  @Field(() => ID, { nullable: true, description: 'The fact it is on (null for an event redaction).' }) factId!: string | null;
  @Field(() => ID, { nullable: true, description: 'The event it is on (event redactions only).' }) eventId!: string | null;
  @Field(() => OverlayKind) kind!: OverlayKind;
  /** GraphQL field in OverlayTextResolver (what the caller may see of it). */
  selector!: QuoteSelector;
  /** SHA-256 of the Silver text it was placed on (GraphQL field in OverlayTextResolver: admin only). */
  textHash!: string;
  /** GraphQL field in OverlayTextResolver (what the caller may see of it). */
  body!: string | null;
  @Field(() => String, { nullable: true }) reason!: string | null;
  @Field(() => String, { description: 'The principal who created it; others need an OVERWRITE_OVERLAY approval to change it.' }) author!: string;
  /** The author's principal id (not a GraphQL field). */
  authorId!: string;
  @Field(() => String, { description: 'Who wrote this version (a principal, or "rebuild" for re-anchoring).' }) changedBy!: string;
  @Field(() => Int, { description: 'Versions are append-only: every revision, retraction and re-anchoring adds one.' }) version!: number;
  @Field(() => OverlayStatusKind) status!: OverlayStatusKind;
  @Field(() => Float, { nullable: true, description: 'How sure the last (re-)anchoring is, 0..1 (1: placed by a person or unchanged).' }) anchorConfidence!:
    number | null;
  @Field(() => Boolean, { description: 'Re-anchored with low confidence, or orphaned: listed by overlaysForReview.' }) needsReview!: boolean;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date, { description: 'When this version was written.' }) versionAt!: Date;

  static from(r: OverlayRecord): Overlay {
    return Object.assign(new Overlay(), {
      ...r,
      kind: r.kind as OverlayKind,
      status: r.status as OverlayStatusKind,
      selector: Object.assign(new QuoteSelector(), r.selector),
    });
  }
}

@InputType({
  description:
    'An overlay: exactly one of factId (any kind) or eventId (REDACTION only). The selector is placed on the current Silver statement (or event content).',
})
export class OverlayInput {
  @Field(() => ID, { nullable: true }) factId?: string | null;
  @Field(() => ID, {
    nullable: true,
    description: 'An event whose content span to redact (hidden from Event.content for callers without "admin"; Bronze keeps the bytes).',
  })
  eventId?: string | null;
  @Field(() => OverlayKind) kind!: OverlayKind;
  @Field(() => String, { description: 'The exact text of the span; it must occur in the text.' }) exact!: string;
  @Field(() => String, { nullable: true, description: 'Text right before the span, to choose among several occurrences.' }) prefix?: string | null;
  @Field(() => String, { nullable: true, description: 'Text right after the span.' }) suffix?: string | null;
  @Field(() => Int, { nullable: true, description: 'UTF-16 code unit offset of the span; exact must be there.' }) start?: number | null;
  @Field(() => String, { nullable: true, description: 'The replacement (EDIT) or note (ANNOTATION); none for REDACTION.' }) body?: string | null;
  @Field(() => String, { nullable: true }) reason?: string | null;
}
