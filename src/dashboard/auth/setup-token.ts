import { randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * The one-time token of the first-run page, printed on the console at start while no dashboard
 * user exists. Kept in memory only: a restart prints a new one; once spent (the first owner made)
 * there is none.
 */
export type SetupToken = {
  /** A fresh token (replacing any before it). */
  issue(): string;
  /** Whether `given` is the live token (constant time). */
  matches(given: string | undefined): boolean;
  /** No token from now on. */
  spend(): void;
  active(): boolean;
};

export function createSetupToken(): SetupToken {
  let token: Buffer | null = null;
  return {
    issue() {
      const text = randomBytes(24).toString('base64url');
      token = Buffer.from(text);
      return text;
    },
    matches(given) {
      if (!token || !given) return false;
      const candidate = Buffer.from(given);
      return candidate.length === token.length && timingSafeEqual(candidate, token);
    },
    spend() {
      token = null;
    },
    active: () => token !== null,
  };
}
