import type { Random } from '../../src/main/engine/seeded-random';

/** The draws every seeded fuzzer makes from its generator (collector-fuzz.ts, config-fuzz.ts). */
export class FuzzDraws {
  constructor(protected readonly r: Random) {}
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.r() * (hi - lo + 1));
  }
  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.r() * xs.length)];
  }
  chance(p: number): boolean {
    return this.r() < p;
  }
}
