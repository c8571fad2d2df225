import { createHmac, timingSafeEqual } from 'node:crypto';

/** `x-webhook-signature`: hex HMAC-SHA256 of the exact raw body with the endpoint secret. */
export const bodySignature = (secret: string, body: string): string =>
  createHmac('sha256', secret).update(body).digest('hex');

const v1Of = (secret: string, body: string, unixSeconds: number): string =>
  createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');

/**
 * `x-weir-signature`: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, so receivers can refuse replays;
 * one `v1` per secret given, in order (the new secret's first while an old one still overlaps).
 */
export function timestampedSignature(secrets: string | readonly string[], body: string, unixSeconds: number): string {
  const keys = typeof secrets === 'string' ? [secrets] : secrets;
  return [`t=${unixSeconds}`, ...keys.map((secret) => `v1=${v1Of(secret, body, unixSeconds)}`)].join(',');
}

/** Compared as bytes of equal length: a header of as many characters, some not ASCII, is simply unequal. */
const equalHex = (a: string, b: string) => {
  const [x, y] = [Buffer.from(a), Buffer.from(b)];
  return x.length === y.length && timingSafeEqual(x, y);
};

/** Receiver-side check of the timestamped signature; `toleranceSeconds` bounds how old a delivery may be. */
export function verifyTimestampedSignature(options: {
  secret: string;
  body: string;
  header: string;
  nowSeconds: number;
  toleranceSeconds?: number;
}): boolean {
  const parts = options.header.split(',').map((kv) => kv.split('=', 2) as [string, string?]);
  const t = Number(parts.find(([key]) => key === 't')?.[1]);
  // Any v1 may be the one: during a secret's overlap the header carries one per secret.
  const given = parts.filter(([key, value]) => key === 'v1' && value).map(([, value]) => value!);
  if (!Number.isInteger(t) || given.length === 0) return false;
  if (Math.abs(options.nowSeconds - t) > (options.toleranceSeconds ?? 300)) return false;
  const expected = v1Of(options.secret, options.body, t);
  return given.some((v1) => equalHex(expected, v1));
}

export const verifyBodySignature = (secret: string, body: string, signature: string): boolean =>
  equalHex(bodySignature(secret, body), signature);
