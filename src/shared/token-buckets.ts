import type { Clock } from './clock.ts';

/** A token bucket's shape: it holds up to `burst` tokens and gains `perSecond` a second; a request takes one. */
export type TokenBucketLimit = { perSecond: number; burst: number };

export type TokenBuckets = {
  /** Takes a token from `key`'s bucket: 0 when taken, else the whole seconds until one is there (nothing taken). */
  take(key: string): number;
  /** Whole seconds until `key`'s bucket has a token, 0 when it has one now; takes nothing. */
  wait(key: string): number;
  /** How many buckets are held (a full bucket is the same as none and may be dropped at any time). */
  size(): number;
};

type Bucket = { tokens: number; at: number };

/** When the map is full, pruning brings it down to this share of `maxBuckets`, so it runs once per many new keys. */
const PRUNE_TO = 0.9;

/**
 * One token bucket per key (an API key, a client address), on the injected clock. Memory is
 * bounded: past `maxBuckets`, buckets that have refilled are dropped first (a full bucket is the
 * same as none), then the least recently used ones, which forgives those keys what they had spent.
 */
export function createTokenBuckets(deps: { clock: Clock; limit: TokenBucketLimit; maxBuckets?: number }): TokenBuckets {
  const { clock, limit } = deps;
  const maxBuckets = deps.maxBuckets ?? 100_000;
  const perMs = limit.perSecond / 1000;
  // Ordered by last use (a use moves the key to the end), so the first keys are the least recently used.
  const buckets = new Map<string, Bucket>();

  const level = (bucket: Bucket | undefined, now: number): number =>
    bucket === undefined ? limit.burst : Math.min(limit.burst, bucket.tokens + Math.max(0, now - bucket.at) * perMs);
  const secondsUntilOne = (tokens: number): number => Math.max(1, Math.ceil((1 - tokens) / limit.perSecond));

  const prune = (now: number): void => {
    for (const [key, bucket] of buckets) if (level(bucket, now) >= limit.burst) buckets.delete(key);
    const target = Math.floor(maxBuckets * PRUNE_TO);
    for (const key of buckets.keys()) {
      if (buckets.size <= target) break;
      buckets.delete(key);
    }
  };

  return {
    take(key) {
      const now = clock.now();
      const bucket = buckets.get(key);
      const tokens = level(bucket, now);
      if (tokens < 1) return secondsUntilOne(tokens);
      if (bucket === undefined && buckets.size >= maxBuckets) prune(now);
      buckets.delete(key);
      buckets.set(key, { tokens: tokens - 1, at: now });
      return 0;
    },
    wait(key) {
      const tokens = level(buckets.get(key), clock.now());
      return tokens >= 1 ? 0 : secondsUntilOne(tokens);
    },
    size: () => buckets.size,
  };
}

const UNITS: Record<string, number> = { s: 1, min: 60, h: 3600 };

/**
 * A limit as settings spell it: `RATE/UNIT:BURST` (`100/s:2000`, `30/min:60`, `600/h:100`), or
 * `off` (null). Throws a message naming what is wrong.
 */
export function parseTokenBucketLimit(text: string): TokenBucketLimit | null {
  if (text.trim().toLowerCase() === 'off') return null;
  const match = /^\s*(\d+(?:\.\d+)?)\s*\/\s*(s|min|h)\s*:\s*(\d+)\s*$/.exec(text);
  if (!match) throw new Error(`expected RATE/UNIT:BURST such as 100/s:2000 or 30/min:60 (units s, min, h), or off`);
  const rate = Number(match[1]);
  const burst = Number(match[3]);
  if (!(rate > 0) || !Number.isFinite(rate)) throw new Error('the rate must be above 0');
  if (!Number.isSafeInteger(burst) || burst < 1) throw new Error('the burst must be a whole number of at least 1');
  return { perSecond: rate / UNITS[match[2]!]!, burst };
}

/** The settings' spelling of a limit (the inverse of `parseTokenBucketLimit` for whole rates per second or minute). */
export function formatTokenBucketLimit(limit: TokenBucketLimit | null): string {
  if (limit === null) return 'off';
  const perMinute = limit.perSecond * 60;
  if (!Number.isInteger(limit.perSecond) && Number.isInteger(perMinute)) return `${perMinute}/min:${limit.burst}`;
  return `${limit.perSecond}/s:${limit.burst}`;
}
