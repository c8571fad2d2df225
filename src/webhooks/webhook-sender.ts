import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Environment } from '../event-store/event-store.ts';
import { DELIVERY_TIMEOUT_MS } from './retry-schedule.ts';
import { webhookHeaders } from './webhook-headers.ts';
import {
  checkLiteralHost,
  guardedLookup,
  hostOf,
  type Resolver,
  type WebhookTargetPolicy,
  WebhookTargetRefusedError,
  webhookTargetPolicy,
} from './webhook-target.ts';

const MAX_CACHED_TARGETS = 10_000;

export type SendOutcome = {
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  /** The start of the answer's body (at most RESPONSE_SNIPPET_BYTES), when there was an answer. */
  response?: string | null;
};

/** How much of a receiver's answer is kept for the delivery log: enough to see an error page's gist. */
export const RESPONSE_SNIPPET_BYTES = 256;

/** The kept start of an answer as text: control characters but newlines and tabs dropped, a cut character removed. */
export const responseSnippet = (bytes: Buffer): string =>
  bytes
    .toString('utf8')
    .replace(/\uFFFD$/, '')
    .replace(/\p{Cc}/gu, (c) => (c === '\n' || c === '\t' ? c : ''));

export type WebhookRequest = {
  url: string;
  body: string;
  secret: string;
  /** The secret a regenerate replaced, while its overlap lasts at `nowMs`: signs beside `secret`. */
  previousSecret?: string | null;
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

/** One request under way: how it ends is decided once, by whichever comes first. */
type Attempt = {
  resolve: (outcome: SendOutcome) => void;
  reject: (error: DeliveryAbortedError) => void;
  started: number;
  request: ClientRequest | null;
  timer: NodeJS.Timeout | undefined;
  forget: (() => void) | null;
  settled: boolean;
};

// Module-level on purpose: a named function made per request costs an allocation and, under tsx,
// a `__name` property write each; thousands of deliveries a second made that a visible share.
function settle(attempt: Attempt, outcome: SendOutcome | DeliveryAbortedError): void {
  if (attempt.settled) return;
  attempt.settled = true;
  clearTimeout(attempt.timer);
  attempt.forget?.();
  if (outcome instanceof DeliveryAbortedError) attempt.reject(outcome);
  else attempt.resolve(outcome);
}

function failed(attempt: Attempt, error: string): void {
  settle(attempt, { statusCode: null, error, durationMs: Math.round(performance.now() - attempt.started) });
}

function stopped(attempt: Attempt): void {
  attempt.request?.destroy();
  settle(attempt, new DeliveryAbortedError('the dispatcher stopped during the request'));
}

function answered(attempt: Attempt, response: IncomingMessage): void {
  const status = response.statusCode ?? 0;
  // The body is read to its end so the connection can serve the next delivery; only its start is kept.
  const kept: Buffer[] = [];
  let keptBytes = 0;
  response.on('data', (chunk: Buffer) => {
    if (keptBytes >= RESPONSE_SNIPPET_BYTES) return;
    const part = chunk.subarray(0, RESPONSE_SNIPPET_BYTES - keptBytes);
    kept.push(part);
    keptBytes += part.length;
  });
  response.on('end', () =>
    settle(attempt, {
      statusCode: status,
      error: status >= 200 && status < 300 ? null : `receiver answered ${status}`,
      durationMs: Math.round(performance.now() - attempt.started),
      response: keptBytes > 0 ? responseSnippet(Buffer.concat(kept, keptBytes)) : null,
    }),
  );
  response.on('error', (error) => failed(attempt, `request failed: ${error.message}`));
}

/** Where a URL sends to. */
type Target = { https: boolean; host: string; port: string; path: string };

function parseTarget(url: string): Target {
  const parsed = new URL(url);
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new Error(`${parsed.protocol} is not http or https`);
  return {
    https: parsed.protocol === 'https:',
    host: hostOf(parsed),
    port: parsed.port,
    path: `${parsed.pathname}${parsed.search}`,
  };
}

/**
 * POSTs one webhook over kept-alive connections. A 2xx answer is success; any other status, a
 * redirect (never followed), a network error, a refused target or no whole answer within the
 * timeout is a failure.
 */
export function createHttpWebhookSender(
  options: {
    timeoutMs?: number;
    userAgent?: string;
    targets?: WebhookTargetPolicy;
    resolve?: Resolver;
    /** false: no `x-webhook-token` (the secret itself) on any delivery, the operator's choice. */
    tokenHeader?: boolean;
  } = {},
): WebhookSender & { close(): void } {
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  const tokenHeader = options.tokenHeader ?? true;
  const userAgent = options.userAgent ?? 'Weir-Webhooks/1';
  const targets = options.targets ?? webhookTargetPolicy();
  const lookup = guardedLookup(options.resolve);
  // Connections to internal addresses (allowed for some environments) and checked ones are pooled
  // apart: a kept-alive socket to an internal address must never carry a delivery that may not reach it.
  const agentsFor = () => ({ http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) });
  const pools = { open: agentsFor(), checked: agentsFor() };

  // Endpoint URLs are few and their deliveries many: each is parsed once.
  const targetsByUrl = new Map<string, Target>();
  const targetOf = (url: string): Target => {
    let target = targetsByUrl.get(url);
    if (!target) {
      target = parseTarget(url);
      if (targetsByUrl.size >= MAX_CACHED_TARGETS) targetsByUrl.delete(targetsByUrl.keys().next().value!);
      targetsByUrl.set(url, target);
    }
    return target;
  };

  // One listener per stop signal, not one per request: adding and removing an EventTarget listener
  // for every delivery cost a visible share of a send, and many would pass the listener limit.
  const attemptsBySignal = new WeakMap<AbortSignal, Set<Attempt>>();
  const watch = (signal: AbortSignal, attempt: Attempt): (() => void) => {
    let attempts = attemptsBySignal.get(signal);
    if (!attempts) {
      const all = new Set<Attempt>();
      signal.addEventListener(
        'abort',
        () => {
          for (const each of [...all]) stopped(each);
        },
        { once: true },
      );
      attemptsBySignal.set(signal, all);
      attempts = all;
    }
    attempts.add(attempt);
    const watched = attempts;
    return () => watched.delete(attempt);
  };

  const send: WebhookSender = ({ url, body, secret, previousSecret, eventId, nowMs, environment, signal }) =>
    new Promise<SendOutcome>((resolve, reject) => {
      const attempt: Attempt = {
        resolve,
        reject,
        started: performance.now(),
        request: null,
        timer: undefined,
        forget: null,
        settled: false,
      };
      if (signal?.aborted) return stopped(attempt);
      attempt.timer = setTimeout(() => {
        attempt.request?.destroy();
        failed(attempt, `no answer within ${timeoutMs} ms`);
      }, timeoutMs);
      if (signal) attempt.forget = watch(signal, attempt);

      const open = targets.allowsInternal(environment);
      let target: Target;
      try {
        target = targetOf(url);
        if (!open) checkLiteralHost(target.host);
      } catch (error) {
        return failed(attempt, `request refused: ${(error as Error).message}`);
      }
      const agents = open ? pools.open : pools.checked;
      const request = (target.https ? httpsRequest : httpRequest)(
        {
          hostname: target.host,
          port: target.port,
          path: target.path,
          method: 'POST',
          agent: target.https ? agents.https : agents.http,
          lookup: open ? undefined : lookup,
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            'user-agent': userAgent,
            ...webhookHeaders({ secret, previousSecret, body, eventId, nowMs, tokenHeader }),
          },
        },
        (response) => answered(attempt, response),
      );
      attempt.request = request;
      request.on('error', (error) =>
        failed(
          attempt,
          `request ${error instanceof WebhookTargetRefusedError ? 'refused' : 'failed'}: ${error.message}`,
        ),
      );
      request.end(body);
    });

  return Object.assign(send, {
    close() {
      for (const agents of Object.values(pools)) {
        agents.http.destroy();
        agents.https.destroy();
      }
    },
  });
}
