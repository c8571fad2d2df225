import { createHmac, timingSafeEqual } from 'node:crypto';

/** `x-webhook-signature`: hex HMAC-SHA256 of the exact raw body with the endpoint secret. */
export const bodySignature = (secret: string, body: string): string =>
  createHmac('sha256', secret).update(body).digest('hex');

/** `x-weir-signature`: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, so receivers can refuse replays. */
export function timestampedSignature(secret: string, body: string, unixSeconds: number): string {
  const v1 = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
  return `t=${unixSeconds},v1=${v1}`;
}

const equalHex = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** Receiver-side check of the timestamped signature; `toleranceSeconds` bounds how old a delivery may be. */
export function verifyTimestampedSignature(options: {
  secret: string;
  body: string;
  header: string;
  nowSeconds: number;
  toleranceSeconds?: number;
}): boolean {
  const parts = new Map(options.header.split(',').map((kv) => kv.split('=', 2) as [string, string]));
  const t = Number(parts.get('t'));
  const v1 = parts.get('v1');
  if (!Number.isInteger(t) || !v1) return false;
  if (Math.abs(options.nowSeconds - t) > (options.toleranceSeconds ?? 300)) return false;
  return equalHex(timestampedSignature(options.secret, options.body, t).split('v1=')[1]!, v1);
}

export const verifyBodySignature = (secret: string, body: string, signature: string): boolean =>
  equalHex(bodySignature(secret, body), signature);
