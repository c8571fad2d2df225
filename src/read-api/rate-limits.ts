import { isIPv6 } from 'node:net';
import type Koa from 'koa';
import { type RateLimitName, RateLimitedError, UnauthorizedError } from '../shared/errors.ts';
import type { Clock } from '../shared/clock.ts';
import {
  createTokenBuckets,
  formatTokenBucketLimit,
  type TokenBucketLimit,
  type TokenBuckets,
} from '../shared/token-buckets.ts';
import type { ApiState } from './api-context.ts';

/** The limits of the HTTP edge; null turns one off. */
export type RateLimits = {
  /** Every `/api/v1` request of one API key. */
  apiKey: TokenBucketLimit | null;
  /** Every request to the hosted pages (`/checkout/*`, `/invoices/*`, `/pay/*`) from one client address. */
  hosted: TokenBucketLimit | null;
  /** Hosted requests that create records (a payment link's form, an invoice's pay link), from one client address. */
  hostedCreates: TokenBucketLimit | null;
  /** Failed authentications (bad or missing API key, bad admin token) from one client address. */
  authFailures: TokenBucketLimit | null;
};

/**
 * Far above what a shop's own traffic does (see the README's configuration table): they stop a
 * flood, a runaway loop or a guesser, not a busy integration or a crowd of payers.
 */
export const DEFAULT_RATE_LIMITS: RateLimits = {
  apiKey: { perSecond: 100, burst: 2000 },
  hosted: { perSecond: 50, burst: 1000 },
  hostedCreates: { perSecond: 1, burst: 60 },
  authFailures: { perSecond: 1, burst: 100 },
};

export const RATE_LIMITS_OFF: RateLimits = { apiKey: null, hosted: null, hostedCreates: null, authFailures: null };

/**
 * What one client address is counted as: an IPv4 address as it is (an IPv4-mapped IPv6 one as
 * IPv4), an IPv6 address by its /64 network, the block a single customer line usually gets, so
 * that one client cannot take a fresh bucket per address of its own network.
 */
export function clientAddressKey(ip: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  if (mapped) return mapped[1]!;
  if (!isIPv6(ip)) return ip;
  const [address = ''] = ip.split('%');
  const [head = '', tail] = address.split('::');
  const groups = (part: string) =>
    part === '' ? [] : part.split(':').flatMap((g) => (g.includes('.') ? ['0', '0'] : [g]));
  const before = groups(head);
  const after = tail === undefined ? [] : groups(tail);
  const all = [...before, ...Array<string>(Math.max(0, 8 - before.length - after.length)).fill('0'), ...after];
  return `${all
    .slice(0, 4)
    .map((g) => Number.parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}

/** The request is a create on the public pages: a payment link's form, or an invoice's pay link (it may open a session). */
const createsRecords = (ctx: Koa.Context): boolean =>
  (ctx.method === 'POST' && ctx.path.startsWith('/pay/')) ||
  (ctx.path.startsWith('/invoices/') && ctx.path.endsWith('/pay'));

export type RateLimiting = {
  /** Counts an `/api/v1` request against its key's bucket (after authentication). */
  perApiKey: Koa.Middleware<ApiState>;
  /** Counts a hosted page request against its client address (and, for a create, the tighter bucket). */
  hosted: Koa.Middleware<ApiState>;
  /**
   * Runs `authenticate`; an `UnauthorizedError` from it counts against the client address, and an
   * address that has spent its failures waits, even with a valid key, before `authenticate` runs.
   */
  authentication(
    authenticate: (ctx: Koa.ParameterizedContext<ApiState>) => Promise<void> | void,
  ): Koa.Middleware<ApiState>;
};

const describe = (limit: TokenBucketLimit) => {
  const [rate, burst] = formatTokenBucketLimit(limit).split(':');
  return `${rate}, bursts of ${burst}`;
};

/** The refusal of the limit `limit`, spent for `wait` more seconds: its message names the limit and why. */
const limited = (limit: RateLimitName, why: string, wait: number) =>
  new RateLimitedError(`rate limit ${limit}: ${why}; try again in ${wait} s`, wait, limit);

/** The rate limits of the HTTP edge, on the injected clock; a limit that is off lets everything through. */
export function createRateLimiting(deps: { clock: Clock; limits: RateLimits; maxBuckets?: number }): RateLimiting {
  const buckets = (limit: TokenBucketLimit | null): TokenBuckets | null =>
    limit === null ? null : createTokenBuckets({ clock: deps.clock, limit, maxBuckets: deps.maxBuckets });
  const { limits } = deps;
  const perKey = buckets(limits.apiKey);
  const hostedReads = buckets(limits.hosted);
  const hostedCreates = buckets(limits.hostedCreates);
  const authFailures = buckets(limits.authFailures);

  return {
    perApiKey: (ctx, next) => {
      const wait = perKey?.take(ctx.state.tenant.keyId) ?? 0;
      if (wait > 0)
        throw limited('api_key', `too many requests with this API key (at most ${describe(limits.apiKey!)})`, wait);
      return next();
    },
    hosted: (ctx, next) => {
      const address = clientAddressKey(ctx.ip);
      // A create spends from both buckets, and from neither when one of them refuses.
      const creates = hostedCreates !== null && createsRecords(ctx) ? hostedCreates : null;
      const createWait = creates?.wait(address) ?? 0;
      if (createWait > 0)
        throw limited(
          'hosted_creates',
          `too many payments started from this address (at most ${describe(limits.hostedCreates!)})`,
          createWait,
        );
      const wait = hostedReads?.take(address) ?? 0;
      if (wait > 0)
        throw limited(
          'hosted',
          `too many requests to the payment pages from this address (at most ${describe(limits.hosted!)})`,
          wait,
        );
      creates?.take(address);
      return next();
    },
    authentication: (authenticate) => async (ctx, next) => {
      if (authFailures) {
        const address = clientAddressKey(ctx.ip);
        const blocked = authFailures.wait(address);
        if (blocked > 0)
          throw limited(
            'auth_failures',
            `too many failed authentications from this address (at most ${describe(limits.authFailures!)}); every request from it waits, with a valid key too`,
            blocked,
          );
        try {
          await authenticate(ctx);
        } catch (error) {
          if (error instanceof UnauthorizedError) authFailures.take(address);
          throw error;
        }
      } else {
        await authenticate(ctx);
      }
      await next();
    },
  };
}
