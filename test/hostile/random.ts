import { randomInt } from 'node:crypto';

/** A seeded source of choices (sfc32), so a run is replayed by its seed. */
export type Random = {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [0, n). */
  int(n: number): number;
  /** True with probability p. */
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
  /** One of `options` chosen by weight: `[[weight, value], …]`. */
  weighted<T>(options: readonly (readonly [number, T])[]): T;
};

/** The seed of this run: `HOSTILE_SEED` if set, or a fresh one. */
export function runSeed(env: NodeJS.ProcessEnv = process.env): number {
  const given = env.HOSTILE_SEED;
  if (given === undefined || given === '') return randomInt(1, 2 ** 31);
  if (!/^\d+$/.test(given)) throw new Error(`HOSTILE_SEED must be a whole number, not ${JSON.stringify(given)}`);
  return Number(given);
}

export function seededRandom(seed: number): Random {
  let a = 0x9e3779b9;
  let b = 0x243f6a88;
  let c = 0xb7e15162;
  let d = seed >>> 0;
  const next = () => {
    a >>>= 0;
    b >>>= 0;
    c >>>= 0;
    d >>>= 0;
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  // The first outputs of sfc32 still show the constants; discard them.
  for (let i = 0; i < 16; i++) next();
  const random: Random = {
    next,
    int: (n) => Math.floor(next() * n),
    chance: (p) => next() < p,
    pick: (items) => {
      if (items.length === 0) throw new Error('pick from an empty list');
      return items[random.int(items.length)]!;
    },
    weighted: (options) => {
      const total = options.reduce((sum, [weight]) => sum + weight, 0);
      let roll = next() * total;
      for (const [weight, value] of options) {
        roll -= weight;
        if (roll < 0) return value;
      }
      return options[options.length - 1]![1];
    },
  };
  return random;
}
