import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * CSRF tokens bound to what the browser holds (its session, or before sign-in its form cookie):
 * an HMAC under a server key, so nothing is stored and another site, which can read neither the
 * cookie nor the page, cannot make one. Every state-changing dashboard request must carry it.
 */
export type Csrf = {
  /** The token for this binding (`session:<id>`, `form:<cookie>`). */
  tokenFor(binding: string): string;
  /** Whether `token` is the binding's token (constant time). */
  verify(binding: string, token: string | undefined): boolean;
};

export function createCsrf(key: Buffer): Csrf {
  if (key.length < 32) throw new Error('the CSRF key must be at least 32 bytes');
  const tokenFor = (binding: string) => createHmac('sha256', key).update(`csrf:${binding}`).digest('base64url');
  return {
    tokenFor,
    verify(binding, token) {
      if (!token) return false;
      const expected = Buffer.from(tokenFor(binding));
      const given = Buffer.from(token);
      return expected.length === given.length && timingSafeEqual(expected, given);
    },
  };
}
