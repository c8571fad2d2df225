import { doublingDelay } from '../shared/backoff.ts';

/** Default delay before a message whose handler threw is delivered again. */
export const defaultRedeliveryDelayMs = 50;
/** Default ceiling of the redelivery backoff. */
export const defaultMaxRedeliveryDelayMs = 1_000;

/**
 * Redelivery backoff after the `deliveryCount`-th delivery failed: `baseMs`, doubled per further
 * failure, never more than `maxMs`.
 */
export function redeliveryDelay(deliveryCount: number, baseMs: number, maxMs: number): number {
  return doublingDelay(deliveryCount, baseMs, maxMs);
}
