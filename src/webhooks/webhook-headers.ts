import { bodySignature, timestampedSignature } from './signature.ts';

/** The setting that leaves `x-webhook-token` out, as the document and guide name it. */
export const TOKEN_HEADER_SETTING = 'WEIR_WEBHOOK_TOKEN_HEADER=off';

/**
 * What each header Weir adds to a delivery means, for the OpenAPI document's `webhooks`: one list
 * beside the function that sets them, so the document cannot leave one out (it once omitted the id).
 * `optional`: the operator may leave it out, so the document must not promise it.
 */
export const WEBHOOK_HEADER_DOCS = {
  'X-Weir-Signature': {
    description:
      '`t=<unix seconds>,v1=<hex>`: v1 is the hex HMAC-SHA256 of `<t>.<raw body>` keyed with the endpoint’s `secret` (the whole string, `whsec_` included, as UTF-8). Recompute it over the raw bytes received, compare in constant time, and refuse a `t` more than 5 minutes from now. Each attempt is signed anew, with the secret the endpoint has then. While a regenerated secret’s old one still signs (until the endpoint’s `previousSecretExpiresAt`) the header carries a `v1` for each, the new one’s first (`t=…,v1=<new>,v1=<old>`): accept it when any `v1` matches',
  },
  'X-Webhook-Signature': {
    description:
      'Hex HMAC-SHA256 of the raw body keyed with the endpoint’s `secret`, the new one only during a regenerate’s overlap (the reference’s header; it has no timestamp, so it does not guard against replays)',
  },
  'X-Webhook-Token': {
    description: `The endpoint’s current \`secret\` itself, never a replaced one (the reference’s header); check a signature instead. Absent where the operator turned it off (\`${TOKEN_HEADER_SETTING}\`), which keeps the key out of a receiver’s request logs`,
    optional: true,
  },
  'X-Webhook-Id': {
    description:
      'The event’s id, the body’s `id`: the same on every retry and resend of the event, so record it and skip an id already handled',
  },
} as const satisfies Record<string, { description: string; optional?: true }>;

type HeaderName = Lowercase<keyof typeof WEBHOOK_HEADER_DOCS>;
type TokenHeader = 'x-webhook-token';

/**
 * The headers that sign and name one attempt of a delivery, signed at `nowMs`; a `previousSecret`
 * (one still inside its overlap) adds its `v1` to `x-weir-signature` only, after the new one's.
 * `tokenHeader: false` leaves out `x-webhook-token`, the secret itself (the operator's setting).
 */
export function webhookHeaders(options: {
  secret: string;
  previousSecret?: string | null;
  body: string;
  eventId: string;
  nowMs: number;
  tokenHeader?: boolean;
}): Record<Exclude<HeaderName, TokenHeader>, string> & Partial<Record<TokenHeader, string>> {
  const { secret, previousSecret, body, eventId, nowMs, tokenHeader = true } = options;
  const secrets = previousSecret ? [secret, previousSecret] : [secret];
  return {
    'x-weir-signature': timestampedSignature(secrets, body, Math.floor(nowMs / 1000)),
    'x-webhook-signature': bodySignature(secret, body),
    ...(tokenHeader ? { 'x-webhook-token': secret } : {}),
    'x-webhook-id': eventId,
  };
}
