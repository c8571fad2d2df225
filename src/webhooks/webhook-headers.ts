import { bodySignature, timestampedSignature } from './signature.ts';

/**
 * What each header Weir adds to a delivery means, for the OpenAPI document's `webhooks`: one list
 * beside the function that sets them, so the document cannot leave one out (it once omitted the id).
 */
export const WEBHOOK_HEADER_DOCS = {
  'X-Weir-Signature':
    '`t=<unix seconds>,v1=<hex>`: v1 is the hex HMAC-SHA256 of `<t>.<raw body>` keyed with the endpoint’s `secret` (the whole string, `whsec_` included, as UTF-8). Recompute it over the raw bytes received, compare in constant time, and refuse a `t` more than 5 minutes from now. Each attempt is signed anew, with the secret the endpoint has then',
  'X-Webhook-Signature':
    'Hex HMAC-SHA256 of the raw body keyed with the endpoint’s `secret` (the reference’s header; it has no timestamp, so it does not guard against replays)',
  'X-Webhook-Token': 'The endpoint’s `secret` itself (the reference’s header); prefer checking a signature',
  'X-Webhook-Id':
    'The event’s id, the body’s `id`: the same on every retry and resend of the event, so record it and skip an id already handled',
} as const;

type HeaderName = Lowercase<keyof typeof WEBHOOK_HEADER_DOCS>;

/** The headers that sign and name one attempt of a delivery, signed at `nowMs`. */
export function webhookHeaders(options: {
  secret: string;
  body: string;
  eventId: string;
  nowMs: number;
}): Record<HeaderName, string> {
  const { secret, body, eventId, nowMs } = options;
  return {
    'x-weir-signature': timestampedSignature(secret, body, Math.floor(nowMs / 1000)),
    'x-webhook-signature': bodySignature(secret, body),
    'x-webhook-token': secret,
    'x-webhook-id': eventId,
  };
}
