import { ValidationError, type WeirError } from '../shared/errors.ts';

/** What the checkout page says of a refusal of the payer's form: the status to answer with, and plain words. */
type PayerRefusal = { status: number; detail: string };

/** Any other refusal: its own words name the API's records and routes, so the payer is shown none of them. */
const UNKNOWN = 'This could not be done. Reload the page and try again.';
const CODE_ENDED = 'This promotion code can no longer be used.';
const CODE_USED_UP = 'This promotion code has been used as many times as it can be.';

/** A checkout that is over, as the refusal of the session's decider names it (`checkout session is expired; …`). */
const OVER: Record<string, string> = {
  complete: 'This checkout has been paid.',
  expired: 'This checkout has expired.',
  canceled: 'This checkout was canceled.',
};

/** Partly paid: the session is not over, yet the cancel, a promotion code and an email are refused, each for its own reason. */
const PARTLY_PAID: [RegExp, string][] = [
  [
    /cannot be canceled/,
    'Part of the amount has already been received, so this payment can no longer be canceled. Send the rest to complete it.',
  ],
  [/promotion code/, 'Part of the amount has already been received, so a promotion code can no longer be applied.'],
  [/an email/, 'Part of the amount has already been received, so an email can no longer be given here.'],
];

/** The refusals a payer's form can meet (the session's and the coupon's deciders, the promotion code's check), by code. */
const BY_CODE: Record<string, (message: string) => string | undefined> = {
  parameter_missing: (message) =>
    message.startsWith('email: ')
      ? 'Give your email first: the renewal invoices of this subscription are sent to it.'
      : undefined,
  // An asset the session does not offer (any offered one is asked the rest rounded up to its unit).
  parameter_invalid: (message) =>
    message.startsWith('assetId: ') ? 'It is not offered by this checkout: choose one of those below.' : undefined,
  status_transition_invalid: (message) => {
    const status = /^checkout session is (\w+)/.exec(message)?.[1];
    if (status === 'incomplete') return PARTLY_PAID.find(([said]) => said.test(message))?.[1] ?? UNKNOWN;
    if (status !== undefined) return OVER[status] ?? UNKNOWN;
    if (/already given/.test(message)) return 'The email for this checkout was already given.';
    if (/does not ask for an email/.test(message)) return 'This checkout does not ask for an email.';
    return UNKNOWN;
  },
  checkout_session_expired: () => OVER.expired!,
  promotion_codes_not_allowed: () => 'This checkout does not take promotion codes.',
  promotion_code_invalid: () => 'This is not a valid promotion code: check it and try again.',
  parameters_exclusive: () => 'Another promotion code is already applied to this checkout: only one can be used.',
  promotion_code_currency_mismatch: () => 'This promotion code is for payments in another currency.',
  promotion_code_expired: () => 'This promotion code has expired.',
  coupon_expired: () => 'This promotion code has expired.',
  coupon_disabled: () => CODE_ENDED,
  coupon_archived: () => CODE_ENDED,
  promotion_code_already_redeemed: () => CODE_ENDED,
  promotion_code_redemption_released: () => CODE_ENDED,
  coupon_limit_reached: () => CODE_USED_UP,
  promotion_code_limit_reached: () => CODE_USED_UP,
  payment_pending: () =>
    'A payment to this checkout is on its way: a promotion code can only be applied before paying.',
};

/**
 * A lasting refusal (a 4xx) of what the payer sent from the checkout page, in the payer's words: the
 * refusals' own name records, ids, timestamps and API routes. Answered with the refusal's status, as
 * the page script's JSON routes answer it (a payment on its way: 409), with these words too
 * (`checkoutErrorPages`): the page says the same with its script or without.
 */
export function payerRefusal(error: WeirError): PayerRefusal {
  // The promotion code refused by its field's check (empty, too long), before any decider saw it.
  const codeCheck = error.code.startsWith('parameter_') ? /^code: (.+)$/.exec(error.message)?.[1] : undefined;
  if (codeCheck !== undefined) return { status: error.statusCode, detail: `The promotion code ${codeCheck}.` };
  const words = BY_CODE[error.code]?.(error.message);
  if (words !== undefined) return { status: error.statusCode, detail: words };
  // The request's own shape (an unknown key, a wrong type) on a field no payer fills: only a client other
  // than the page sends it, and the field it names is what to mend; it names no record, id or route.
  if (error instanceof ValidationError && error.field !== null && !PAYER_FIELDS.has(error.field.split(/[.[]/)[0]!))
    return { status: error.statusCode, detail: error.message };
  return { status: error.statusCode, detail: UNKNOWN };
}

/** The fields a payer fills on the checkout page (the asset chosen, a promotion code, an email). */
const PAYER_FIELDS = new Set(['assetId', 'code', 'email']);
