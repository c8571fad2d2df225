import { bodyObject, oneOf, optional, requiredText, timestamp, z } from './fields.ts';

/** A card processor's keys (Stripe's): `pk_…` to show payers, `sk_…` or a restricted `rk_…` to act on the account. */
export const PUBLISHABLE_KEY = /^pk_(test|live)_[0-9A-Za-z]{10,247}$/;
export const SECRET_KEY = /^(?:sk|rk)_(test|live)_[0-9A-Za-z]{10,247}$/;

export const CardProcessorUpdate = bodyObject({
  provider: optional(oneOf(['stripe'])).openapi({ description: 'The card processor; `stripe` (the default)' }),
  publishableKey: requiredText({
    max: 256,
    pattern: PUBLISHABLE_KEY,
    hint: 'must be a publishable key (pk_test_… or pk_live_…)',
  }),
  secretKey: requiredText({
    max: 256,
    pattern: SECRET_KEY,
    hint: 'must be a secret key (sk_test_…, sk_live_… or a restricted rk_… key)',
  }).openapi({ description: 'Stored sealed; never answered again, only its last four characters' }),
}).openapi('CardProcessorUpdate', {
  example: { provider: 'stripe', publishableKey: 'pk_test_51Hx0000000000', secretKey: 'sk_test_51Hx0000000000' },
});

export const CardProcessorSchema = z
  .object({
    object: z.literal('card_processor'),
    connected: z.boolean(),
    provider: z.enum(['stripe']).nullable(),
    publishableKey: z.string().nullable(),
    secretKeyLast4: z.string().nullable().openapi({ description: 'The secret key is never answered: only these' }),
    cardPaymentsAvailable: z.literal(false).openapi({
      description:
        'Whether checkout offers card payments: not yet, as this Weir server runs no card processor integration; the keys wait for it',
    }),
    connectedAt: timestamp().nullable(),
    updatedAt: timestamp().nullable(),
  })
  .openapi('CardProcessor', {
    example: {
      object: 'card_processor',
      connected: true,
      provider: 'stripe',
      publishableKey: 'pk_test_51Hx0000000000',
      secretKeyLast4: '0000',
      cardPaymentsAvailable: false,
      connectedAt: '2026-05-01T08:00:00.000Z',
      updatedAt: '2026-05-01T08:00:00.000Z',
    },
  });
