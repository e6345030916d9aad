import { createHash } from 'node:crypto';
import { ApprovalException } from './approval.exception';
import { paramsHash, parseApprovalParams } from './approval-params';
import { ApprovalAction } from './approval.types';

const ID = '0B5C7A4E-1F6D-4C1A-9A51-2F1E0C9D8B7A';

describe('approval parameters', () => {
  it('normalises DESTROY_EVENT to exactly {eventId} in lower case', () => {
    expect(parseApprovalParams(ApprovalAction.DESTROY_EVENT, { eventId: ID })).toEqual({ eventId: ID.toLowerCase() });
  });

  it('takes RETAIN_BRONZE as exactly {before} on the first day of a month', () => {
    expect(parseApprovalParams(ApprovalAction.RETAIN_BRONZE, { before: '2007-07-01' })).toEqual({ before: '2007-07-01' });
  });

  it.each([
    [ApprovalAction.DESTROY_EVENT, {}],
    [ApprovalAction.DESTROY_EVENT, { eventId: 'nope' }],
    [ApprovalAction.DESTROY_EVENT, { eventId: ID, extra: 1 }],
    [ApprovalAction.DESTROY_EVENT, 'a string'],
    [ApprovalAction.OVERWRITE_OVERLAY, { overlayId: ID, kind: 'DELETE' }],
    [ApprovalAction.OVERWRITE_OVERLAY, { overlayId: ID, body: 3 }],
    [ApprovalAction.RETAIN_BRONZE, { before: '2007-07-15' }],
    [ApprovalAction.RETAIN_BRONZE, { before: '2007-13-01' }],
    [ApprovalAction.RETAIN_BRONZE, { before: '2007-07-01', namespace: 'x' }],
  ])('refuses %s %j with BAD_INPUT', (action, params) => {
    expect(() => parseApprovalParams(action, params)).toThrow(ApprovalException);
    try {
      parseApprovalParams(action, params);
    } catch (e) {
      expect((e as ApprovalException).kind).toBe('BAD_INPUT');
    }
  });

  it('hashes the canonical JSON: key order does not matter, values do', () => {
    const a = paramsHash({ overlayId: ID, body: 'x', kind: 'EDIT' });
    expect(paramsHash({ kind: 'EDIT', body: 'x', overlayId: ID })).toBe(a);
    expect(paramsHash({ kind: 'EDIT', body: 'y', overlayId: ID })).not.toBe(a);
  });

  it('hashes DESTROY_EVENT the way bronze.destroy_event recomputes it', () => {
    const id = ID.toLowerCase();
    expect(paramsHash({ eventId: id })).toBe(createHash('sha256').update(`{"eventId":"${id}"}`).digest('hex'));
  });
});
