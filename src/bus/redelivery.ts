/** Default delay before a message whose handler threw is delivered again. */
export const defaultRedeliveryDelayMs = 50;
/** Default ceiling of the redelivery backoff. */
export const defaultMaxRedeliveryDelayMs = 1_000;

/**
 * Redelivery backoff after the `deliveryCount`-th delivery failed: `baseMs`, doubled per further
 * failure, never more than `maxMs`.
 */
export function redeliveryDelay(deliveryCount: number, baseMs: number, maxMs: number): number {
  const exponent = Math.min(Math.max(deliveryCount - 1, 0), 30);
  return Math.max(0, Math.min(baseMs * 2 ** exponent, maxMs));
}
