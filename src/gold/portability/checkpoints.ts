/**
 * Retention checkpoints (docs/operations.md "Retention checkpoints"): what `bronze.retain_events`
 * signs, per namespace, when it drops a Bronze partition (migration 1764400001420). Pure: the
 * verifier reads them to accept the event links whose records retention dropped, and to hold the
 * chain at each cut to the head the checkpoint signed.
 */
export interface RetentionCheckpoint {
  id: string;
  namespace: string;
  partition: string;
  /** The partition's range of occurredAt, text with microseconds (UTC). */
  rangeFrom: string;
  rangeTo: string;
  /** The namespace's events in the partition, and how many of them had a chain link. */
  droppedEvents: number;
  sealedEvents: number;
  /** The seqs of those links, as PostgreSQL prints an int8multirange (`{[3,5),[9,10)}`). */
  droppedLinks: string;
  /** The chain head at the cut (0 and 64 zeros: the chain was empty). */
  cutSeq: number;
  cutHash: string;
  approvalId: string;
  executedBy: string;
  createdAt: string;
  signature: string;
  /** Whether the signature is the instance key's over these fields: true/false from the live database, null when unknown (an export file). */
  signatureValid: boolean | null;
}

/** The half-open ranges `[lo, hi)` of an int8multirange's text form. */
export function parseMultirange(text: string): Array<[number, number]> {
  const body = text.trim();
  if (!/^\{.*\}$/.test(body)) throw new Error(`not a multirange: ${JSON.stringify(text.slice(0, 60))}`);
  const out: Array<[number, number]> = [];
  for (const m of body.slice(1, -1).matchAll(/([[(])(\d+),(\d+)([\])])/g)) {
    const lo = Number(m[2]) + (m[1] === '(' ? 1 : 0);
    const hi = Number(m[3]) + (m[4] === ']' ? 1 : 0);
    out.push([lo, hi]);
  }
  return out;
}

/** The checkpoints of one chain, indexed for the verifier. */
export class CheckpointIndex {
  private readonly ranges: Array<{ lo: number; hi: number; cp: RetentionCheckpoint }>;

  constructor(readonly all: readonly RetentionCheckpoint[] = []) {
    this.ranges = all.flatMap((cp) => parseMultirange(cp.droppedLinks).map(([lo, hi]) => ({ lo, hi, cp })));
  }

  /** The checkpoint whose dropped links include `seq` (the valid one first, when several do). */
  covering(seq: number): RetentionCheckpoint | undefined {
    const hits = this.ranges.filter((r) => seq >= r.lo && seq < r.hi && seq <= r.cp.cutSeq).map((r) => r.cp);
    return hits.find((cp) => cp.signatureValid !== false) ?? hits[0];
  }

  /** What is wrong with the link at `seq` as the checkpoints with their cut there see it, or null. */
  cutProblem(seq: number, hash: string): string | null {
    for (const cp of this.all) {
      if (cp.cutSeq !== seq) continue;
      if (cp.signatureValid === false) return `retention checkpoint ${cp.id} (${cp.partition}) cut here, and its signature does not verify`;
      if (cp.cutHash !== hash) return `the link differs from the chain head retention checkpoint ${cp.id} (${cp.partition}) signed at this cut`;
    }
    return null;
  }

  /** A checkpoint whose cut lies beyond the chain's last link (`last`): links were removed after it was signed. */
  beyond(last: number): RetentionCheckpoint | undefined {
    return this.all.find((cp) => cp.cutSeq > last);
  }
}
