/** Webhook retry policy: first attempt at once, then 30 s doubling without cap, 10 attempts in all. */
export const MAX_DELIVERY_ATTEMPTS = 10;
export const FIRST_RETRY_DELAY_MS = 30_000;
export const DELIVERY_TIMEOUT_MS = 10_000;

/** Delay between attempt `attempt` (1-based) and the next one. */
export const retryDelayMs = (attempt: number): number => FIRST_RETRY_DELAY_MS * 2 ** (attempt - 1);

/** When attempt `attempt` (1-based) is due, for a delivery whose first attempt was due at `firstAt`. */
export function attemptDueAt(firstAt: number, attempt: number): number {
  let at = firstAt;
  for (let n = 1; n < attempt; n++) at += retryDelayMs(n);
  return at;
}
