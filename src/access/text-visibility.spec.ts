import { AuthContext } from './auth-context';
import { Capability } from './capability';
import { ComposeSpan } from '../common/compose-text';
import { composeReason, entityNamesHidden, hideNames, visibleChecksum, visibleNames, visibleTextHash } from './text-visibility';

const redaction = (start: number, end: number): ComposeSpan => ({ kind: 'REDACTION', start, end, body: null, order: 1 });
const edit = (start: number, end: number, body: string): ComposeSpan => ({ kind: 'EDIT', start, end, body, order: 1 });

function caller(capabilities: Capability[]): AuthContext {
  return AuthContext.of({ principalId: 'p', tokenId: 't', name: 'caller', grants: [{ namespacePattern: 'ns', capabilities }] }, 'secret');
}

describe('composeReason: a judge reason follows the facts it names', () => {
  const old = "The user's secret codename is ZEBRA42Q";
  const reason = `a change: "The user's new secret codename is HERON" replaces "${old}" (2 shared topic word(s))`;

  it('is hidden whole while one of the facts it names has an active redaction, however little of it is redacted', () => {
    expect(composeReason(reason, [{ machineStatement: old, statement: '[redacted]', spans: [redaction(0, old.length)] }])).toBe('[redacted]');
    const partly = { machineStatement: old, statement: "The user's secret codename is [redacted]", spans: [redaction(30, 38)] };
    expect(composeReason(`a change: HERON replaces ZEBRA42Q`, [partly])).toBe('[redacted]');
  });

  it('shows edited statements as the facts read, and is unchanged without overlays', () => {
    const edited = { machineStatement: old, statement: "The user's secret codename is OKAPI", spans: [edit(30, 38, 'OKAPI')] };
    expect(composeReason(reason, [edited])).toBe(
      `a change: "The user's new secret codename is HERON" replaces "The user's secret codename is OKAPI" (2 shared topic word(s))`,
    );
    expect(composeReason(reason, [{ machineStatement: old, statement: old, spans: [] }])).toBe(reason);
  });
});

describe("entityNamesHidden: an entity's names follow the spans it was found in", () => {
  const spans = new Map<string, ComposeSpan[]>([['e1', [redaction(10, 18)]]]);
  const of = (id: string) => spans.get(id) ?? [];

  it('hides when every mention lies inside a redaction', () => {
    expect(entityNamesHidden([{ eventId: 'e1', start: 10, end: 18 }], 1, of)).toBe(true);
  });

  it('shows when a mention is outside, only partly covered, or not among those read', () => {
    expect(entityNamesHidden([{ eventId: 'e1', start: 0, end: 18 }], 1, of)).toBe(false);
    expect(entityNamesHidden([{ eventId: 'e1', start: 10, end: 18 }], 2, of)).toBe(false);
    expect(entityNamesHidden([{ eventId: 'e2', start: 10, end: 18 }], 1, of)).toBe(false);
    expect(entityNamesHidden([], 0, of)).toBe(false);
  });

  it('counts touching redactions as one cover', () => {
    const touching = (id: string) => (id === 'e1' ? [redaction(10, 14), redaction(14, 18)] : []);
    expect(entityNamesHidden([{ eventId: 'e1', start: 10, end: 18 }], 1, touching)).toBe(true);
  });

  it('replaces the names and drops the aliases of a hidden entity only', () => {
    const e = { id: 'x', name: 'Zebra42q', aliases: ['Z42'] };
    expect(visibleNames(e, true)).toEqual({ id: 'x', name: '[redacted]', aliases: [] });
    expect(visibleNames(e, false)).toBe(e);
  });
});

describe('hideNames: text derived from names', () => {
  it('is hidden whole when it holds a hidden name as a word, in any case', () => {
    expect(hideNames('names differ in words ("Zebra42q" vs "Zebra")', ['Zebra42q'])).toBe('[redacted]');
    expect(hideNames('same normalised name "zebra42q"', ['Zebra42q'])).toBe('[redacted]');
  });

  it('keeps a text where the name is only part of a longer word, or no name is hidden', () => {
    expect(hideNames('Zebra42quartz merged', ['Zebra42q'])).toBe('Zebra42quartz merged');
    expect(hideNames('anything', [])).toBe('anything');
  });
});

describe('hashes are shown only with what they hash', () => {
  const event = { namespace: 'ns', checksum: 'c'.repeat(64), destroyedAt: null };

  it('an event checksum: with the payload (no active redaction, or admin), never once erased', () => {
    expect(visibleChecksum(caller([Capability.READ]), event, [])).toBe(event.checksum);
    expect(visibleChecksum(caller([Capability.READ]), event, [redaction(0, 3)])).toBeNull();
    expect(visibleChecksum(caller([Capability.ADMIN]), event, [redaction(0, 3)])).toBe(event.checksum);
    expect(visibleChecksum(caller([Capability.ADMIN]), { ...event, destroyedAt: new Date() }, [])).toBeNull();
  });

  it("an overlay's textHash: to admin only", () => {
    const overlay = { namespace: 'ns', textHash: 'h'.repeat(64) };
    expect(visibleTextHash(caller([Capability.READ, Capability.OVERLAY]), overlay)).toBeNull();
    expect(visibleTextHash(caller([Capability.ADMIN]), overlay)).toBe(overlay.textHash);
  });
});
