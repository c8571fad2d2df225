/**
 * Opens a connection to a service that may not be up yet (a container started beside it): each
 * failure that `retryable` accepts is logged with the wait before the next try, and the wait doubles
 * up to `maxDelayMs`. A failure it does not accept (a malformed URL, bad credentials) is thrown at
 * once, and so is every failure after `giveUpAfterMs` (when given).
 */
export async function untilReachable<T>(
  what: string,
  open: () => Promise<T>,
  options: {
    retryable: (error: unknown) => boolean;
    log: (line: string, fields: { service: string; attempt: number; retryInMs: number; reason: string }) => void;
    firstDelayMs?: number;
    maxDelayMs?: number;
    giveUpAfterMs?: number;
    wait?: (ms: number) => Promise<void>;
  },
): Promise<T> {
  const wait = options.wait ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const started = Date.now();
  let delay = options.firstDelayMs ?? 500;
  for (let attempt = 1; ; attempt++) {
    try {
      return await open();
    } catch (error) {
      const late = options.giveUpAfterMs !== undefined && Date.now() - started >= options.giveUpAfterMs;
      if (!options.retryable(error) || late) throw error;
      const reason = error instanceof Error ? error.message : String(error);
      options.log(`${what} is not reachable yet (${reason}); trying again in ${Math.round(delay / 100) / 10} s`, {
        service: what,
        attempt,
        retryInMs: delay,
        reason,
      });
      await wait(delay);
      delay = Math.min(delay * 2, options.maxDelayMs ?? 30_000);
    }
  }
}

/** Errors of the MongoDB and KurrentDB clients that mean "not there (yet)", by their class names. */
const UNREACHABLE = /ServerSelection|Network|Unavailable|ECONNREFUSED|ENOTFOUND|EAI_AGAIN|Timeout/i;

export function looksUnreachable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  return UNREACHABLE.test(error.name) || UNREACHABLE.test(String(code ?? '')) || UNREACHABLE.test(error.message);
}
