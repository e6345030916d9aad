/** The time source; services take it as a parameter so tests can pin it. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
