import { monthsAhead } from './partitions';

describe('monthsAhead', () => {
  it('covers last month, this month and the month after the window’s far edge', () => {
    expect(monthsAhead(new Date('2026-12-01T08:00:00Z'), { maxPastDays: 7305, maxFutureDays: 1 })).toEqual(['2026-11-01', '2026-12-01', '2027-01-01']);
    expect(monthsAhead(new Date('2026-12-31T08:00:00Z'), { maxPastDays: 7305, maxFutureDays: 1 })).toEqual([
      '2026-11-01',
      '2026-12-01',
      '2027-01-01',
      '2027-02-01',
    ]);
    expect(monthsAhead(new Date('2026-03-10T00:00:00Z'), { maxPastDays: 7305, maxFutureDays: 60 })).toEqual([
      '2026-02-01',
      '2026-03-01',
      '2026-04-01',
      '2026-05-01',
      '2026-06-01',
    ]);
  });

  it('leaves out last month when the window does not reach back to it', () => {
    expect(monthsAhead(new Date('2026-03-20T00:00:00Z'), { maxPastDays: 5, maxFutureDays: 0 })).toEqual(['2026-03-01', '2026-04-01']);
  });
});
