import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Environment } from '../event-store/event-store.ts';
import { DELIVERY_TIMEOUT_MS } from './retry-schedule.ts';
import { bodySignature, timestampedSignature } from './signature.ts';
import {
  checkLiteralHost,
  guardedLookup,
  hostOf,
  type Resolver,
  type WebhookTargetPolicy,
  WebhookTargetRefusedError,
  webhookTargetPolicy,
} from './webhook-target.ts';

export type SendOutcome = { statusCode: number | null; error: string | null; durationMs: number };

export type WebhookRequest = {
  url: string;
  body: string;
  secret: string;
  eventId: string;
  nowMs: number;
  /** Whose delivery this is: decides whether internal addresses may be reached (see `WebhookTargetPolicy`). */
  environment: Environment;
  signal?: AbortSignal;
};

export type WebhookSender = (request: WebhookRequest) => Promise<SendOutcome>;

/** Thrown when the dispatcher stops mid-request: the attempt did not happen and is not recorded. */
export class DeliveryAbortedError extends Error {
  override readonly name = 'DeliveryAbortedError';
}

/**
 * POSTs one webhook over kept-alive connections. A 2xx answer is success; any other status, a
 * redirect (never followed), a network error, a refused target or no whole answer within the
 * timeout is a failure.
 */
export function createHttpWebhookSender(
  options: { timeoutMs?: number; userAgent?: string; targets?: WebhookTargetPolicy; resolve?: Resolver } = {},
): WebhookSender & { close(): void } {
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  const targets = options.targets ?? webhookTargetPolicy();
  const lookup = guardedLookup(options.resolve);
  // Connections to internal addresses (allowed for some environments) and checked ones are pooled
  // apart: a kept-alive socket to an internal address must never carry a delivery that may not reach it.
  const agentsFor = () => ({ http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) });
  const pools = { open: agentsFor(), checked: agentsFor() };

  const send: WebhookSender = ({ url, body, secret, eventId, nowMs, environment, signal }) => {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    return new Promise<SendOutcome>((resolve, reject) => {
      let request: ClientRequest | null = null;
      let settled = false;
      const finish = (outcome: SendOutcome | DeliveryAbortedError) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        if (outcome instanceof DeliveryAbortedError) reject(outcome);
        else resolve(outcome);
      };
      const fail = (error: string) => finish({ statusCode: null, error, durationMs: elapsed() });
      const onAbort = () => {
        request?.destroy();
        finish(new DeliveryAbortedError('the dispatcher stopped during the request'));
      };
      const timer = setTimeout(() => {
        request?.destroy();
        fail(`no answer within ${timeoutMs} ms`);
      }, timeoutMs);
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });

      const open = targets.allowsInternal(environment);
      let target: URL;
      try {
        target = new URL(url);
        if (target.protocol !== 'http:' && target.protocol !== 'https:')
          throw new Error(`${target.protocol} is not http or https`);
        if (!open) checkLiteralHost(hostOf(target));
      } catch (error) {
        return fail(`request refused: ${(error as Error).message}`);
      }
      const https = target.protocol === 'https:';
      const agents = open ? pools.open : pools.checked;
      request = (https ? httpsRequest : httpRequest)(
        target,
        {
          method: 'POST',
          agent: https ? agents.https : agents.http,
          ...(open ? {} : { lookup }),
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            'user-agent': options.userAgent ?? 'Weir-Webhooks/1',
            'x-webhook-signature': bodySignature(secret, body),
            'x-webhook-token': secret,
            'x-weir-signature': timestampedSignature(secret, body, Math.floor(nowMs / 1000)),
            'x-webhook-id': eventId,
          },
        },
        (response: IncomingMessage) => {
          const status = response.statusCode ?? 0;
          // The body is read to its end (and dropped) so the connection can serve the next delivery.
          response.resume();
          response.on('end', () =>
            finish({
              statusCode: status,
              error: status >= 200 && status < 300 ? null : `receiver answered ${status}`,
              durationMs: elapsed(),
            }),
          );
          response.on('error', (error) => fail(`request failed: ${error.message}`));
        },
      );
      request.on('error', (error) =>
        fail(`request ${error instanceof WebhookTargetRefusedError ? 'refused' : 'failed'}: ${error.message}`),
      );
      request.end(body);
    });
  };

  return Object.assign(send, {
    close() {
      for (const agents of Object.values(pools)) {
        agents.http.destroy();
        agents.https.destroy();
      }
    },
  });
}
