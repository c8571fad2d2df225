import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Time-based one-time passwords (RFC 6238 over RFC 4226's HOTP): HMAC-SHA1, 6 digits, 30-second
 * steps, as every authenticator app reads an `otpauth://` address. Time is always passed in (the
 * injected clock), never read here.
 */
export const TOTP_STEP_SECONDS = 30;
export const TOTP_DIGITS = 6;
/** Steps either side of now a code is still taken at: a phone's clock a little off, a code typed as it turned. */
export const TOTP_WINDOW = 1;

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

export function base32Encode(bytes: Buffer): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

/** Base32 as people copy it: upper or lower case, spaces and padding ignored; null when it holds another character. */
export function base32Decode(text: string): Buffer | null {
  const clean = text.replace(/[\s=-]/g, '').toUpperCase();
  const bytes: number[] = [];
  let bits = 0;
  let value = 0;
  for (const char of clean) {
    const index = BASE32.indexOf(char);
    if (index < 0) return null;
    value = ((value << 5) | index) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      bytes.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(bytes);
}

/** A new shared secret: 20 random bytes (160 bits, RFC 4226's recommendation), in base32. */
export const generateTotpSecret = (): string => base32Encode(randomBytes(20));

/** The step a moment falls in. */
export const totpStepAt = (nowMs: number): number => Math.floor(nowMs / 1000 / TOTP_STEP_SECONDS);

/** HOTP (RFC 4226) of `key` at `counter`, `digits` long. */
export function hotp(key: Buffer, counter: number, digits = TOTP_DIGITS): string {
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac('sha1', key).update(message).digest();
  const offset = mac[mac.length - 1]! & 0x0f;
  const binary = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 10 ** digits).padStart(digits, '0');
}

/** The code a base32 secret shows at a step. */
export function totpCode(secret: string, step: number): string {
  const key = base32Decode(secret);
  if (!key || key.length === 0) throw new Error('a TOTP secret must be base32');
  return hotp(key, step);
}

/**
 * The step whose code `code` is, within `TOTP_WINDOW` steps of `nowMs`, or null. The caller keeps
 * the last step used and refuses one not after it, so a code works once.
 */
export function verifyTotp(secret: string, code: string, nowMs: number): number | null {
  const given = code.replace(/\s/g, '');
  if (!/^\d{6}$/.test(given)) return null;
  const now = totpStepAt(nowMs);
  let found: number | null = null;
  // Every step of the window is compared (no early return), so the time taken says nothing.
  for (let step = now - TOTP_WINDOW; step <= now + TOTP_WINDOW; step++) {
    if (timingSafeEqual(Buffer.from(totpCode(secret, step)), Buffer.from(given)) && found === null) found = step;
  }
  return found;
}

/** The address an authenticator app reads from the QR code (Key URI format). */
export function otpauthUrl(input: { secret: string; account: string; issuer: string }): string {
  const label = encodeURIComponent(`${input.issuer}:${input.account}`);
  const query = new URLSearchParams({
    secret: input.secret,
    issuer: input.issuer,
    algorithm: 'SHA1',
    digits: String(TOTP_DIGITS),
    period: String(TOTP_STEP_SECONDS),
  });
  return `otpauth://totp/${label}?${query.toString()}`;
}
