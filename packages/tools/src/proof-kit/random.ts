import { seeded } from '@exactly-once/runtime/runtime/random';

/**
 * A seeded PRNG (mulberry32): the same seed gives the same request plan and the
 * same fault rolls in the kit, so a failing run can be replayed exactly.
 */
export type Random = () => number;

export function seededRandom(seed: number): Random {
  return seeded(seed);
}

export function pick<T>(random: Random, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)];
}

export function intBetween(random: Random, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}
