/**
 * The chaos test's random choices (when to kill, whom), from a printed seed so a failing run can be replayed with
 * CHAOS_SEED. mulberry32, the generator bench/qc.bench.ts seeds its records with: a few lines, no state beyond a
 * 32-bit word, and good enough spread for picking among three processes.
 */
export interface SeededRandom {
  seed: number;
  /** In [0, 1). */
  next(): number;
  /** An integer in [min, max]. */
  between(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
}

export function seededRandom(seed: number): SeededRandom {
  let a = seed | 0;
  const next = () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    seed,
    next,
    between: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: (items) => items[Math.floor(next() * items.length)]!,
  };
}

/** CHAOS_SEED when given (to replay a failure), else a fresh one. */
export function chaosSeed(): number {
  const given = process.env.CHAOS_SEED;
  if (given !== undefined && given !== '') {
    const seed = Number(given);
    if (!Number.isInteger(seed)) throw new Error(`CHAOS_SEED must be an integer (the seed a chaos run printed), not "${given}"`);
    return seed;
  }
  return Math.floor(Math.random() * 2 ** 31);
}
