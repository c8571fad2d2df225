import { doublingDelay } from '../../../shared/backoff.ts';

/** Exponential backoff from `base`, capped at `max`, with ±20 % jitter so followers do not retry in step. */
export function jitteredBackoff(attempt: number, base: number, max: number): number {
  const plain = doublingDelay(attempt, base, max);
  return Math.round(plain * (0.8 + Math.random() * 0.4));
}
