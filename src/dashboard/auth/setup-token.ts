import { randomBytes, timingSafeEqual } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';

/** The setup token's file in the data dir, there only while the token is live. */
export const SETUP_TOKEN_FILE = 'dashboard-setup-token';

/**
 * The one-time token of the first-run page, issued at start while no dashboard user exists. Kept in
 * memory and, when given a file, in that file (0600) for the operator to read: never in a log line.
 * A restart issues a new one; once spent (the first owner made) there is none, and no file.
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

export function createSetupToken(file?: string): SetupToken {
  let token: Buffer | null = null;
  const forget = () => {
    if (file) rmSync(file, { force: true });
  };
  return {
    issue() {
      const text = randomBytes(24).toString('base64url');
      token = Buffer.from(text);
      // Removed first: the mode applies only to a file this call creates.
      forget();
      if (file) writeFileSync(file, `${text}\n`, { mode: 0o600, flag: 'wx' });
      return text;
    },
    matches(given) {
      if (!token || !given) return false;
      const candidate = Buffer.from(given);
      return candidate.length === token.length && timingSafeEqual(candidate, token);
    },
    spend() {
      token = null;
      forget();
    },
    active: () => token !== null,
  };
}
