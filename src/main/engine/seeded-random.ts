/** A random source returning floats in [0, 1), like Math.random. */
export type Random = () => number;

/**
 * mulberry32: a tiny 32-bit PRNG. Not cryptographic; chosen because the same seed gives the same
 * sequence on every machine and Node version, so a QA run with `seed: 42` can be reproduced.
 */
export function mulberry32(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function randomSeed(): number {
  return Math.floor(Math.random() * 4294967296) >>> 0;
}
