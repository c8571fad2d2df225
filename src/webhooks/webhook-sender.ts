import { bodySignature, timestampedSignature } from './signature.ts';
import { DELIVERY_TIMEOUT_MS } from './retry-schedule.ts';

export type SendOutcome = { statusCode: number | null; error: string | null; durationMs: number };

export type WebhookSender = (request: {
  url: string;
  body: string;
  secret: string;
  eventId: string;
  nowMs: number;
  signal?: AbortSignal;
}) => Promise<SendOutcome>;

/** Thrown when the dispatcher stops mid-request: the attempt did not happen and is not recorded. */
export class DeliveryAbortedError extends Error {
  override readonly name = 'DeliveryAbortedError';
}

/**
 * POSTs one webhook. A 2xx answer is success; any other status, a redirect, a network error or
 * no answer within the timeout is a failure. Redirects are not followed.
 */
export function createHttpWebhookSender(options: { timeoutMs?: number; userAgent?: string } = {}): WebhookSender {
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  return async ({ url, body, secret, eventId, nowMs, signal }) => {
    if (signal?.aborted) throw new DeliveryAbortedError('the dispatcher stopped before the request');
    const started = performance.now();
    // One controller with a plain timer: AbortSignal.any() over AbortSignal.timeout() can lose the
    // timeout signal to garbage collection on Node 20, leaving a hung request hung forever.
    const controller = new AbortController();
    const timer = setTimeout(
      () => controller.abort(new DOMException(`no answer within ${timeoutMs} ms`, 'TimeoutError')),
      timeoutMs,
    );
    const onStop = () => controller.abort(signal?.reason);
    signal?.addEventListener('abort', onStop, { once: true });
    try {
      const response = await fetch(url, {
        method: 'POST',
        redirect: 'manual',
        signal: controller.signal,
        headers: {
          'content-type': 'application/json',
          'user-agent': options.userAgent ?? 'Weir-Webhooks/1',
          'x-webhook-signature': bodySignature(secret, body),
          'x-webhook-token': secret,
          'x-weir-signature': timestampedSignature(secret, body, Math.floor(nowMs / 1000)),
          'x-webhook-id': eventId,
        },
        body,
      });
      await response.arrayBuffer().catch(() => undefined);
      const durationMs = Math.round(performance.now() - started);
      const ok = response.status >= 200 && response.status < 300;
      return { statusCode: response.status, error: ok ? null : `receiver answered ${response.status}`, durationMs };
    } catch (error) {
      if (signal?.aborted) throw new DeliveryAbortedError('the dispatcher stopped during the request');
      const durationMs = Math.round(performance.now() - started);
      const name = (error as Error).name;
      const message =
        name === 'TimeoutError' || name === 'AbortError'
          ? `no answer within ${timeoutMs} ms`
          : `request failed: ${(error as Error).message}`;
      return { statusCode: null, error: message, durationMs };
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onStop);
    }
  };
}
