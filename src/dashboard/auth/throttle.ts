import type { Clock } from '../../shared/clock.ts';
import { RateLimitedError } from '../../shared/errors.ts';
import { createTokenBuckets, type TokenBucketLimit } from '../../shared/token-buckets.ts';

export type SignInThrottleLimits = { perAccount: TokenBucketLimit; perAddress: TokenBucketLimit };

/**
 * Five wrong passwords for one account, then one try a minute: a person who mistypes is not held
 * up, a guesser gets 60 an hour. An address gets 20, then one every 10 s (an office behind one NAT).
 */
export const DEFAULT_SIGN_IN_LIMITS: SignInThrottleLimits = {
  perAccount: { perSecond: 1 / 60, burst: 5 },
  perAddress: { perSecond: 1 / 10, burst: 20 },
};

/**
 * Failed sign-ins (and failed re-authentications) counted per account (its lower-cased email) and
 * per client address. While either is spent every attempt is refused before the password is
 * checked, a right one too, so a guesser learns nothing from the answers it still gets.
 */
export type SignInThrottle = {
  /** Throws a 429 naming what is spent and when to try again; else returns. */
  check(account: string, address: string): void;
  failed(account: string, address: string): void;
};

export function createSignInThrottle(deps: { clock: Clock; limits?: SignInThrottleLimits }): SignInThrottle {
  const limits = deps.limits ?? DEFAULT_SIGN_IN_LIMITS;
  const accounts = createTokenBuckets({ clock: deps.clock, limit: limits.perAccount, maxBuckets: 100_000 });
  const addresses = createTokenBuckets({ clock: deps.clock, limit: limits.perAddress, maxBuckets: 100_000 });
  const key = (account: string) => account.trim().toLowerCase();
  return {
    check(account, address) {
      const forAccount = accounts.wait(key(account));
      if (forAccount > 0)
        throw new RateLimitedError(
          `too many failed sign-ins for this account; try again in ${forAccount} s`,
          forAccount,
        );
      const forAddress = addresses.wait(address);
      if (forAddress > 0)
        throw new RateLimitedError(
          `too many failed sign-ins from this address; try again in ${forAddress} s`,
          forAddress,
        );
    },
    failed(account, address) {
      accounts.take(key(account));
      addresses.take(address);
    },
  };
}
