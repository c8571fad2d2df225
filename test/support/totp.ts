import { createHmac } from 'node:crypto';

/**
 * RFC 6238 codes for browser tests, written apart from src/dashboard/auth/totp.ts so a test
 * checks the product against the RFC and not against itself: HMAC-SHA1, 30-second steps, 6 digits,
 * from a base32 secret as an authenticator app reads it.
 */
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

function fromBase32(text: string): Buffer {
  const bits = [...text.replace(/[\s=]/g, '').toUpperCase()]
    .map((char) => {
      const value = ALPHABET.indexOf(char);
      if (value < 0) throw new Error(`not base32: ${char}`);
      return value.toString(2).padStart(5, '0');
    })
    .join('');
  const bytes = bits.match(/.{8}/g) ?? [];
  return Buffer.from(bytes.map((byte) => Number.parseInt(byte, 2)));
}

/** The code of `key` (raw bytes) at a Unix time in seconds, `digits` long (RFC 4226 truncation). */
export function totpAt(key: Buffer, unixSeconds: number, digits = 6): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(unixSeconds / 30)));
  const mac = createHmac('sha1', key).update(counter).digest();
  const offset = mac[19]! & 0xf;
  const value = ((mac[offset]! & 0x7f) << 24) | (mac[offset + 1]! << 16) | (mac[offset + 2]! << 8) | mac[offset + 3]!;
  return String(value % 10 ** digits).padStart(digits, '0');
}

/** The code an authenticator app shows for a base32 secret at `nowMs`. */
export const totpCodeFor = (secret: string, nowMs: number): string => totpAt(fromBase32(secret), nowMs / 1000);

/** A 6-digit code that is none of the secret's within a step of `nowMs`: wrong for certain. */
export function wrongTotpCode(secret: string, nowMs: number): string {
  const near = new Set([-30_000, 0, 30_000].map((d) => totpCodeFor(secret, nowMs + d)));
  for (let n = 0; ; n++) {
    const code = String(n).padStart(6, '0');
    if (!near.has(code)) return code;
  }
}
