import test from 'ava';
import type { CheckoutSession, SessionDiscount } from '../../machines/checkout-session.types.ts';
import { redemptionFate } from './promotion-code-redemption-fate.ts';

// --- the fate of a redemption, given its session ------------------------------------------------

const REDEMPTION = { couponId: 'c1', promotionCodeId: 'p1' };
const discount = (couponId: string, promotionCodeId: string): SessionDiscount => ({
  couponId,
  promotionCodeId,
  code: promotionCodeId.toUpperCase(),
  amountDiscount: '1',
  at: '2026-01-01T00:00:00.000Z',
});
const fateOf = (status: CheckoutSession['status'], discounts: SessionDiscount[] = []) =>
  redemptionFate({ status, discounts }, REDEMPTION);

test('given a session canceled or expired, with its discount or none, then the redemption is released', (t) => {
  for (const discounts of [[], [discount('c1', 'p1')]]) {
    t.deepEqual(fateOf('canceled', discounts), { kind: 'release', reason: 'the checkout session was canceled' });
    t.deepEqual(fateOf('expired', discounts), { kind: 'release', reason: 'the checkout session expired unpaid' });
  }
});

test("given a session with another code's discount, then released; with its own, held until completed, then used", (t) => {
  for (const other of [discount('c2', 'p2'), discount('c1', 'p2')])
    for (const status of ['open', 'incomplete', 'complete'] as const)
      t.deepEqual(fateOf(status, [other]), {
        kind: 'release',
        reason: `promotion code ${other.code} was applied to the checkout session instead`,
      });
  t.deepEqual(fateOf('open', [discount('c1', 'p1')]), { kind: 'held' });
  t.deepEqual(fateOf('incomplete', [discount('c1', 'p1')]), { kind: 'held' });
  t.deepEqual(fateOf('complete', [discount('c1', 'p1')]), { kind: 'used' });
});

test('given a session with no discount yet, then held while open, released once paid (in full or in part) without it', (t) => {
  t.deepEqual(fateOf('open'), { kind: 'held' });
  for (const status of ['complete', 'incomplete'] as const)
    t.deepEqual(fateOf(status), { kind: 'release', reason: 'the checkout session was paid without the discount' });
});
