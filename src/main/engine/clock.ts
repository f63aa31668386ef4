/** Injectable time and randomness (DESIGN.md lesson 6): tests and time-warp use the same seam. */
export interface Clock {
  now(): number;
  random(): number;
}

export const systemClock: Clock = { now: () => Date.now(), random: () => Math.random() };
