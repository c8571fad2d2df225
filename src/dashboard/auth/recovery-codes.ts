import { createHash, randomBytes } from 'node:crypto';
import { base32Encode } from './totp.ts';

/** How many recovery codes an enrolment hands out. */
export const RECOVERY_CODE_COUNT = 10;

/**
 * Recovery codes: 16 base32 characters (80 random bits) shown as `ABCD-EFGH-IJKL-MNOP`. That much
 * entropy needs no slow hash: each is kept as the SHA-256 of its owner's id and the code, so a
 * copy of the log neither holds the codes nor lets one be guessed.
 */
export function generateRecoveryCodes(count = RECOVERY_CODE_COUNT): string[] {
  return Array.from({ length: count }, () =>
    base32Encode(randomBytes(10))
      .slice(0, 16)
      .replace(/(.{4})(?!$)/g, '$1-'),
  );
}

/** A code as typed (any case, with or without dashes or spaces), in the form it was hashed in; null when it cannot be one. */
export function normalizeRecoveryCode(code: string): string | null {
  const clean = code.replace(/[\s-]/g, '').toUpperCase();
  return /^[A-Z2-7]{16}$/.test(clean) ? clean : null;
}

export const hashRecoveryCode = (userId: string, normalized: string): string =>
  createHash('sha256').update(`${userId}:${normalized}`).digest('hex');
