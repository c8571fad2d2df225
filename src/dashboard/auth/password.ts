import { hash, verify } from '@node-rs/argon2';

/** `Algorithm.Argon2id`, a const enum the module's types declare (unreadable under verbatimModuleSyntax). */
const ARGON2ID = 2;

/** The length a password must have: long enough to resist guessing, short enough to hash quickly. */
export const PASSWORD_MIN = 10;
export const PASSWORD_MAX = 256;

/** What is wrong with a password as a new password, or null. Length is the rule (NIST 800-63B); no composition rules. */
export function passwordProblem(password: string): string | null {
  if (password.length < PASSWORD_MIN) return `must be at least ${PASSWORD_MIN} characters`;
  if (password.length > PASSWORD_MAX) return `must be at most ${PASSWORD_MAX} characters`;
  return null;
}

/** argon2id with the library's defaults (19 MiB, 2 passes, 1 lane: OWASP's recommended minimum); a PHC string. */
export const hashPassword = (password: string): Promise<string> => hash(password, { algorithm: ARGON2ID });

/** Checked against an unknown user's email, so that a wrong email takes as long as a wrong password. */
let decoy: Promise<string> | null = null;

/**
 * Whether `password` is the one hashed as `passwordHash`. With no hash (no such user) it hashes
 * against a decoy and says no, so the time taken does not tell which emails are users.
 */
export async function verifyPassword(passwordHash: string | null, password: string): Promise<boolean> {
  if (password.length > PASSWORD_MAX) return false;
  if (passwordHash === null) {
    decoy ??= hashPassword('decoy password that nobody has');
    await verify(await decoy, password).catch(() => false);
    return false;
  }
  return verify(passwordHash, password).catch(() => false);
}
