import test from 'ava';
import { checkoutSessionAggregate } from '../../machines/checkout-session.aggregate.ts';
import type { CheckoutSessionCommand } from '../../machines/checkout-session.decide.ts';
import { canceled, created, sessionFixture } from '../../machines/checkout-session.fixture.ts';
import type { CheckoutSessionEvent } from '../../machines/checkout-session.types.ts';
import { InvalidStateError, NotFoundError, ValidationError, WeirError } from '../shared/errors.ts';
import { payerRefusal } from './checkout-refusals.ts';

/** What the session's decider refuses of `command` after `events`, as the command handler throws it. */
function refusalOf(events: CheckoutSessionEvent[], command: CheckoutSessionCommand, now: string): WeirError {
  const state = events.reduce(checkoutSessionAggregate.evolve, checkoutSessionAggregate.initialState());
  try {
    checkoutSessionAggregate.decide(state, command, { now });
  } catch (error) {
    if (error instanceof WeirError) return error;
    throw error;
  }
  throw new Error(`${command.type} was not refused`);
}

const INTERNALS = /checkout session|command|aggregate|revision|\/api\/|\d{4}-\d\d-\d\dT|[a-z]+[A-Z]\w*:/;

test("the session's refusals of a form on a checkout that is over (its read model behind) say so in the payer's words, as a 400", (t) => {
  const expired: CheckoutSessionEvent = { type: 'CheckoutSessionExpired', data: { at: '2026-01-01T01:00:00.000Z' } };
  const late = '2026-01-01T02:00:00.000Z';
  for (const [events, command, words] of [
    [[created(), expired], { type: 'SelectPaymentMethod', addressId: 'x' }, 'This checkout has expired.'],
    [[created(), canceled()], { type: 'SelectPaymentMethod', addressId: 'x' }, 'This checkout was canceled.'],
    [[created(), expired], { type: 'CancelCheckoutSession', reason: null }, 'This checkout has expired.'],
    [
      [created(), expired],
      { type: 'CollectCustomerEmail', email: 'a@b.example' },
      'This checkout does not ask for an email.',
    ],
  ] as const) {
    const refusal = payerRefusal(refusalOf([...events], command, late));
    t.deepEqual(refusal, { status: 400, detail: words }, command.type);
    t.notRegex(refusal.detail, INTERNALS);
  }
});

test("a partly paid checkout's refusals of the cancel and of a promotion code each say why in the payer's words", (t) => {
  const partlyPaid: CheckoutSessionEvent = {
    type: 'CheckoutSessionPartiallyPaid',
    data: { amountReceived: '100000000', at: '2026-01-01T00:12:00.000Z' },
  };
  const now = '2026-01-01T00:13:00.000Z';
  for (const [command, words] of [
    [
      { type: 'CancelCheckoutSession', reason: null },
      'Part of the amount has already been received, so this payment can no longer be canceled. Send the rest to complete it.',
    ],
    [
      {
        type: 'ApplyDiscount',
        discount: { couponId: 'c', promotionCodeId: 'p', code: 'SPARE', amountDiscount: '1000000' },
      },
      'Part of the amount has already been received, so a promotion code can no longer be applied.',
    ],
  ] as const) {
    const opened = created(sessionFixture({ allowPromotionCodes: true }));
    const refusal = payerRefusal(refusalOf([opened, partlyPaid], command, now));
    t.deepEqual(refusal, { status: 400, detail: words }, command.type);
    t.notRegex(refusal.detail, INTERNALS);
  }
});

test('an asset not offered says so', (t) => {
  t.is(
    payerRefusal(new ValidationError('assetId', 'is not offered by this checkout session')).detail,
    'It is not offered by this checkout: choose one of those below.',
  );
});

test("a request's own shape on a field no payer fills (an unknown key, a wrong type) keeps its words naming the field, never the asset's; a payer's field unknown to the list is the plain fallback", (t) => {
  t.deepEqual(payerRefusal(new ValidationError('extra', 'is not a field of this request')), {
    status: 400,
    detail: 'extra: is not a field of this request',
  });
  t.is(
    payerRefusal(new ValidationError('account', 'must be a string', 'parameter_invalid_string')).detail,
    'account: must be a string',
  );
  t.is(
    payerRefusal(new ValidationError('email', 'must be a string', 'parameter_invalid_string')).detail,
    'This could not be done. Reload the page and try again.',
  );
});

test("the promotion code's own check (empty, too long) is said of the promotion code, whatever its code", (t) => {
  t.deepEqual(payerRefusal(new ValidationError('code', 'must not be empty', 'parameter_invalid_string_empty')), {
    status: 400,
    detail: 'The promotion code must not be empty.',
  });
  t.is(
    payerRefusal(new ValidationError('code', 'must be at most 100 characters', 'parameter_invalid')).detail,
    'The promotion code must be at most 100 characters.',
  );
});

test('a refusal of no known kind is told without its words (was its message, naming records, ids and routes)', (t) => {
  for (const error of [
    new NotFoundError('checkout session', '11111111-1111-4111-8111-111111111111'),
    new InvalidStateError('checkout session does not exist', 'resource_missing'),
    new ValidationError('email', 'is not a known address', 'email_invalid'),
    new InvalidStateError('checkout session is new; something else', 'status_transition_invalid'),
  ]) {
    const refusal = payerRefusal(error);
    t.is(refusal.detail, 'This could not be done. Reload the page and try again.', error.message);
    t.is(refusal.status, error.statusCode);
  }
});

test("the coupon's refusals of a code say what is wrong with the code, never the coupon's id, limit or time", (t) => {
  for (const [error, words] of [
    [
      new InvalidStateError('coupon c-1 expired at 2026-01-01T00:00:00.000Z', 'coupon_expired'),
      'This promotion code has expired.',
    ],
    [
      new InvalidStateError('promotion code LAUNCH expired at 2026-01-01T00:00:00.000Z', 'promotion_code_expired'),
      'This promotion code has expired.',
    ],
    [new InvalidStateError('coupon c-1 is archived', 'coupon_archived'), 'This promotion code can no longer be used.'],
    [
      new InvalidStateError(
        'promotion code LAUNCH has reached its maximum of 5 redemptions',
        'promotion_code_limit_reached',
      ),
      'This promotion code has been used as many times as it can be.',
    ],
    [
      new ValidationError(
        'code',
        'LAUNCH takes USDT off; this checkout is in USDC',
        'promotion_code_currency_mismatch',
      ),
      'This promotion code is for payments in another currency.',
    ],
    [
      new ValidationError(
        'code',
        'this checkout session does not accept promotion codes',
        'promotion_codes_not_allowed',
      ),
      'This checkout does not take promotion codes.',
    ],
    [
      new InvalidStateError('checkout session expired at 2026-01-01T01:00:00.000Z', 'checkout_session_expired'),
      'This checkout has expired.',
    ],
  ] as const) {
    t.deepEqual(payerRefusal(error), { status: 400, detail: words }, error.message);
  }
});
