import test from 'ava';
import { givenWhenThen } from '../actors/given-when-then.ts';
import { checkoutSessionAggregate } from '../../machines/checkout-session.aggregate.ts';
import type { CheckoutSessionCommand } from '../../machines/checkout-session.decide.ts';
import {
  canceled,
  confirmedLate,
  created,
  daiPaymentFixture,
  daiSessionFixture,
  detected,
  detectedDai,
  dustSentBeforeCancel,
  lateHalfMakesAUnit,
  markedRefunded,
  paymentFixture,
  sessionAfterEvents,
  sessionFixture,
} from '../../machines/checkout-session.fixture.ts';
import type { CheckoutSession, CheckoutSessionEvent, SessionPayment } from '../../machines/checkout-session.types.ts';
import { paymentWords, payerStatus } from './checkout-status.ts';
import {
  allSentBefore,
  confirmingAfterClose,
  lateMoney,
  receivedSplit,
  refundMarkedAt,
  withInvoicePaidLate,
} from '../../machines/checkout-session.late.ts';
import { NOW, fineGrainedPayment, names, pay, payment, withUsdcChosen as chosen } from './payer-status.fixture.ts';

test('the payer is told the state in words: waiting, confirming, partly paid, paid, expired, canceled', (t) => {
  const open = sessionFixture();
  t.like(payerStatus(open, names, NOW), { state: 'waiting', title: 'Waiting for payment', payment: null });
  t.like(payerStatus(sessionFixture({ payments: [payment('100000000', 'pending')] }), names, NOW), {
    state: 'confirming',
    confirmations: { pending: 1, required: null },
  });
  const partly = sessionFixture({
    status: 'incomplete',
    amountReceived: '100000000',
    payments: [payment('100000000', 'confirmed')],
  });
  const s = payerStatus(partly, names, NOW);
  t.like(s, { state: 'partly_paid', amountRemaining: '200000000', amountRemainingFormatted: '2.00' });
  t.is(s.detail, '1.00 USDC of 3.00 USDC received. Send the remaining 2.00 USDC to finish.');
  t.like(payerStatus(sessionFixture({ status: 'complete', paymentStatus: 'paid' }), names, NOW), {
    state: 'paid',
    redirectUrl: 'https://shop.example/ok',
    returnUrl: 'https://shop.example/ok',
  });
  t.like(payerStatus(sessionFixture({ status: 'expired', cancelUrl: 'https://shop.example/cart' }), names, NOW), {
    state: 'expired',
    returnUrl: 'https://shop.example/cart',
  });
  t.like(payerStatus(sessionFixture({ status: 'canceled' }), names, NOW), { state: 'canceled', returnUrl: null });
});

test('a session completed short (as is, by the merchant or because its invoice was settled) is owed nothing: paid, no rest to send, no request', (t) => {
  const short = chosen(
    sessionFixture({
      status: 'complete',
      paymentStatus: 'paid',
      amountReceived: '100000000',
      payments: [payment('100000000', 'confirmed')],
    }),
  );
  const s = payerStatus(short, names, NOW, undefined, pay);
  t.like(s, {
    state: 'paid',
    title: 'Paid',
    amountReceived: '100000000',
    amountRemaining: '0',
    amountLeftFormatted: '0.00',
    amountToSend: '0',
    payment: null,
  });
  t.is(s.detail, 'Payment received, thank you.');
});

test('an overpaid session tells the payer whom to contact about the excess: the business at the contact it set, its name alone when it set none', (t) => {
  const overpaid = sessionFixture({ status: 'complete', paymentStatus: 'paid', amountOverpaid: '50000000' });
  const detail = (business?: Parameters<typeof payerStatus>[5]) =>
    payerStatus(overpaid, names, NOW, undefined, undefined, business).detail;
  const sent = 'Payment received, thank you. You sent 0.50 USDC more than was due; contact';
  const none = { name: 'My Shop', email: null, supportEmail: null, phone: null, supportPhone: null, websiteUrl: null };
  t.is(
    detail({ ...none, email: 'hello@shop.example', supportEmail: 'support@shop.example' }),
    `${sent} My Shop at support@shop.example about it.`,
  );
  t.is(
    detail({ ...none, email: 'hello@shop.example', phone: '+1 555 0100' }),
    `${sent} My Shop at hello@shop.example or +1 555 0100 about it.`,
  );
  t.is(detail({ ...none, websiteUrl: 'https://shop.example' }), `${sent} My Shop at https://shop.example about it.`);
  // A website that is not an http(s) link is no way to reach anyone.
  t.is(detail({ ...none, websiteUrl: 'javascript:alert(1)' }), `${sent} My Shop about it.`);
  t.is(detail(none), `${sent} My Shop about it.`);
  t.is(detail(), `${sent} the business about it.`);
  // An expired session partly paid: the payer is told whom to ask about what they sent, too.
  const expired = sessionFixture({
    status: 'expired',
    amountReceived: '100000000',
    payments: [payment('100000000', 'confirmed')],
  });
  t.is(
    payerStatus(expired, names, NOW, undefined, undefined, { ...none, supportEmail: 'support@shop.example' }).detail,
    'This checkout expired before it was paid in full (1.00 USDC received). Contact My Shop at support@shop.example about the amount already sent.',
  );
});

test('once an asset is chosen, the request asks for what remains, in the asset units, with a matching EIP-681 URI', (t) => {
  /** The status of the session as `overrides` leave it, with USDC chosen, as its page asks for it. */
  const statusOf = (overrides: Partial<CheckoutSession> = {}) =>
    payerStatus(chosen(sessionFixture(overrides)), names, NOW, undefined, pay);
  const before = statusOf();
  t.like(before.payment, { amountDueRaw: '3000000', amountDue: '3', networkName: 'Weir Testnet', symbol: 'USDC' });
  const after = statusOf({
    status: 'incomplete',
    amountReceived: '125000000',
    payments: [payment('125000000', 'confirmed')],
  });
  t.like(after.payment, { amountDueRaw: '1750000', amountDue: '1.75' });
  t.is(
    after.payment?.paymentUri,
    'ethereum:0x00000000000000000000000000000000000A11cE@7357/transfer?address=0x00000000000000000000000000000000000D3B05&uint256=1750000',
  );
  // A payment seen but not confirmed is not asked for twice.
  const seen = statusOf({ payments: [payment('100000000', 'pending')] });
  t.like(seen, { amountRemaining: '300000000', amountToSend: '200000000' });
  t.like(seen.payment, { amountDueRaw: '2000000' });
  // A payment seen that covers the rest leaves nothing to send: no request (one for 0 would invite a payment).
  t.like(statusOf({ payments: [payment('300000000', 'pending')] }), {
    state: 'confirming',
    amountRemaining: '300000000',
    amountToSend: '0',
    payment: null,
  });
  // A finished session asks for nothing.
  t.is(statusOf({ status: 'expired' }).payment, null);
});

test('confirming: n of m from the followed chain head (the payment block counts as one), m from the network as configured', (t) => {
  const seen = payment('100000000', 'pending');
  const session = sessionFixture({ payments: [seen] });
  const at = (head: bigint | null) =>
    payerStatus(session, names, NOW, (network) => (network === seen.network ? { head, required: 5 } : null));
  t.like(at(BigInt(seen.blockNumber) + 2n), { confirmations: { pending: 1, current: 3, required: 5 } });
  t.regex(at(BigInt(seen.blockNumber) + 2n).detail, /seen on the network, 3 of 5 confirmations\./);
  t.like(at(BigInt(seen.blockNumber) + 40n), { confirmations: { current: 5, required: 5 } });
  t.like(at(BigInt(seen.blockNumber) - 1n), { confirmations: { current: 0, required: 5 } });
  t.regex(at(null).detail, /waiting for 5 confirmations/);
  t.like(payerStatus(session, names, NOW), { confirmations: { current: null } });
});

test('the words of a payment request: the organization as label, the items as message (quantities, one line of at most 120 characters)', (t) => {
  const item = (name: string, quantity: number) =>
    ({
      description: null,
      quantity,
      price: { product: { name } },
    }) as unknown as CheckoutSession['lineItems']['data'][number];
  const session = (items: ReturnType<typeof item>[]) =>
    ({ lineItems: { object: 'list', data: items } }) as unknown as CheckoutSession;
  t.deepEqual(paymentWords(session([item('Coffee', 2), item('Cake', 1)]), 'Corner Café'), {
    label: 'Corner Café',
    message: 'Coffee ×2, Cake',
  });
  t.deepEqual(paymentWords(session([]), null), {});
  const long = paymentWords(session([item('x'.repeat(200), 1)]), 'Shop').message!;
  t.is(long.length, 120);
  t.true(long.endsWith('…'));
});

test('a DAI session 1 wei short shows 0.00000001 DAI left (the least the page shows), and its request asks for exactly that 1 wei', (t) => {
  const dai = daiSessionFixture();
  const address = dai.addresses[0]!;
  const withDaiChosen = (session: CheckoutSession): CheckoutSession => ({
    ...session,
    paymentIntent: {
      ...session.paymentIntent,
      paymentMethod: {
        id: address.id,
        type: 'wallet',
        accountAddress: address.paymentAddress,
        asset: address.asset,
        amountDue: '1',
        options: {
          wallet: { assetId: address.asset.id, transactionHash: null, contractAddress: address.asset.address },
        },
      },
    },
  });
  const paid = (status: SessionPayment['status']): SessionPayment => ({
    ...daiPaymentFixture(`short-${status}`, '139929999999999'),
    status,
    detectedAt: '2026-01-01T00:10:00.000Z',
    confirmedAt: status === 'confirmed' ? '2026-01-01T00:11:00.000Z' : null,
    late: false,
  });
  const short = payerStatus(
    withDaiChosen({ ...dai, status: 'incomplete', amountReceived: '13992', payments: [paid('confirmed')] }),
    names,
    NOW,
    undefined,
    pay,
  );
  t.like(short, { state: 'partly_paid', amountRemaining: '1', amountToSend: '1', amountToSendFormatted: '0.00000001' });
  t.is(short.detail, '0.00013992 DAI of 0.00013993 DAI received. Send the remaining 0.00000001 DAI to finish.');
  t.like(short.payment, { amountDueRaw: '1', amountDue: '0.000000000000000001' });
  t.regex(short.payment?.paymentUri ?? '', /uint256=1$/);
  // Seen but not confirmed yet: the same 1 wei is what is left to send.
  const seen = payerStatus(withDaiChosen({ ...dai, payments: [paid('pending')] }), names, NOW, undefined, pay);
  t.like(seen, { state: 'confirming', amountToSend: '1' });
  t.like(seen.payment, { amountDueRaw: '1' });
});

test('what was received late is summed exactly: two DAI payments of half a 10^-8 unit each are one unit, not nothing', (t) => {
  // Folded as the machine folds them: late money is cut from the amountReceived it sums (`receivedSplit`).
  const session = sessionAfterEvents(
    canceled(),
    detectedDai('a', '5000000000', '2026-01-01T00:21:00.000Z'),
    ...confirmedLate('a', '0'),
    detectedDai('b', '5000000000', '2026-01-01T00:22:00.000Z'),
    ...confirmedLate('b', '0', '2026-01-01T00:26:00.000Z'),
  );
  t.is(session.amountReceived, '1');
  t.is(lateMoney(session).amount, 1n);
});

test('a payment seen after the checkout expired or was canceled, not yet final, is announced to the payer as arriving late and to be settled by the business; once final, as received late', (t) => {
  for (const status of ['expired', 'canceled'] as const) {
    const arriving = payerStatus(sessionFixture({ status, payments: [payment('300000000', 'pending')] }), names, NOW);
    t.like(arriving, { state: status, title: 'Payment arriving after closing' });
    t.is(
      arriving.detail,
      `Your payment of 3.00 USDC reached this address after this checkout was ${status} and is being confirmed. Once it is, the business is notified and will settle it with you, by a refund or a credit. Do not send anything more to this address.`,
    );
    const late = { ...payment('300000000', 'confirmed'), late: true };
    const received = payerStatus(sessionFixture({ status, amountReceived: '300000000', payments: [late] }), names, NOW);
    t.like(received, { state: status, title: 'Payment received after closing' });
    t.is(
      received.detail,
      `Your payment of 3.00 USDC was received after this checkout was ${status}. The business has been notified and will settle it with you, by a refund or a credit. Do not send anything more to this address.`,
    );
  }
});

test("once the business marks the late payment refunded, the payer is told so with the day, not that it will be settled; the business's note is its own and not shown", (t) => {
  const none = { name: 'My Shop', email: null, supportEmail: 'support@shop.example', phone: null, supportPhone: null };
  const closing = {
    expired: { type: 'CheckoutSessionExpired', data: { at: '2026-01-01T01:00:00.000Z' } },
    canceled: canceled(),
  } as const;
  const marked = (status: 'expired' | 'canceled', ...after: CheckoutSessionEvent[]) =>
    sessionAfterEvents(
      closing[status],
      detected('t1', '300000000', '2026-01-01T01:01:00.000Z'),
      ...confirmedLate('t1', '300000000', '2026-01-01T01:02:00.000Z'),
      markedRefunded('2026-01-02T09:00:00.000Z', 'internal: sent back from the ops wallet 0xabc'),
      ...after,
    );
  for (const status of ['expired', 'canceled'] as const) {
    const shown = payerStatus(marked(status), names, NOW, undefined, undefined, none);
    t.like(shown, { state: status, title: 'Payment marked refunded' });
    t.is(
      shown.detail,
      `Your payment of 3.00 USDC was received after this checkout was ${status}. The business marked this payment refunded on January 2, 2026; if the refund has not reached you, contact My Shop at support@shop.example. Do not send anything more to this address.`,
    );
    t.notRegex(JSON.stringify(shown), /ops wallet|0xabc/);
  }
  // Money confirmed after the mark is not covered by it: the payer is told that money (alone) will be settled.
  const again = payerStatus(
    marked(
      'expired',
      detected('after', '100000000', '2026-01-03T00:00:00.000Z'),
      ...confirmedLate('after', '100000000', '2026-01-03T00:00:00.000Z'),
    ),
    names,
    NOW,
  );
  t.is(again.title, 'Payment received after closing');
  t.regex(again.detail, /^Your payment of 1\.00 USDC was received after this checkout was expired\./);
});

test("what a mark of refunded covers is told by the log's order, not by timestamps: late money confirmed before the mark in its very millisecond, or stamped later by a clock ahead, is covered; confirmed after it in that millisecond, or stamped earlier by a clock behind, is not", (t) => {
  const AT = '2026-01-02T09:00:00.000Z';
  const late = [
    canceled(),
    detected('t1', '300000000', '2026-01-01T00:25:00.000Z'),
    ...confirmedLate('t1', '300000000', AT),
  ];
  // Confirmed, then marked, in one millisecond: the mark covers it.
  const covered = sessionAfterEvents(...late, markedRefunded(AT));
  t.is(refundMarkedAt(covered), AT);
  t.like(lateMoney(covered), { amount: 300000000n, refundedAt: AT });
  t.is(payerStatus(covered, names, NOW).title, 'Payment marked refunded');
  // 1 USDC more confirmed after the mark, in its millisecond: to settle, alone.
  const more = detected('t2', '100000000', '2026-01-02T08:59:00.000Z');
  const sameMs = sessionAfterEvents(...late, markedRefunded(AT), more, ...confirmedLate('t2', '100000000', AT));
  t.is(refundMarkedAt(sameMs), null);
  t.like(lateMoney(sameMs), { amount: 100000000n, refundedAt: null });
  t.deepEqual(
    lateMoney(sameMs).payments.map((p) => p.transferId),
    ['t2'],
  );
  t.is(payerStatus(sameMs, names, NOW).title, 'Payment received after closing');
  // Confirmed after the mark by an instance whose clock is a minute behind: not covered all the same.
  const behind = '2026-01-02T08:59:00.000Z';
  const skewed = sessionAfterEvents(...late, markedRefunded(AT), more, ...confirmedLate('t2', '100000000', behind));
  t.is(refundMarkedAt(skewed), null);
  t.like(lateMoney(skewed), { amount: 100000000n, refundedAt: null });
  // Confirmed before the mark by an instance whose clock is a minute ahead: covered.
  const ahead = sessionAfterEvents(
    canceled(),
    detected('t1', '300000000', '2026-01-01T00:25:00.000Z'),
    ...confirmedLate('t1', '300000000', '2026-01-02T09:01:00.000Z'),
    markedRefunded(AT),
  );
  t.is(refundMarkedAt(ahead), AT);
  t.is(payerStatus(ahead, names, NOW).title, 'Payment marked refunded');
});

test('a payment seen before the checkout was canceled and confirming across the cancel is told as sent before it, not as arriving after closing; once final it completes nothing and is settled by the business', (t) => {
  // The machine cancels an open session with a payment still confirming; once final it is late money (LatePaymentReceived).
  const seen = detected('t1', '300000000');
  const confirming = payerStatus(sessionAfterEvents(seen, canceled()), names, NOW);
  t.like(confirming, { state: 'canceled', title: 'Payment confirming, checkout canceled' });
  t.is(
    confirming.detail,
    'Your payment of 3.00 USDC was sent before this checkout was canceled and is being confirmed. Once it is, this money does not complete the canceled checkout: the business is notified and will settle it with you, by a refund or a credit. Do not send anything more to this address.',
  );
  const received = payerStatus(sessionAfterEvents(seen, canceled(), ...confirmedLate('t1', '300000000')), names, NOW);
  t.like(received, { state: 'canceled', title: 'Payment received, checkout canceled' });
  t.is(
    received.detail,
    'Your payment of 3.00 USDC was sent before this checkout was canceled. This money does not complete the canceled checkout: the business has been notified and will settle it with you, by a refund or a credit. Do not send anything more to this address.',
  );
  t.notRegex(`${confirming.detail} ${received.detail}`, /after this checkout/);
  // Seen after the cancel: late, as before.
  const after = detected('after', '100000000', '2026-01-01T00:25:00.000Z');
  t.like(payerStatus(sessionAfterEvents(canceled(), after), names, NOW), { title: 'Payment arriving after closing' });
  const both = payerStatus(sessionAfterEvents(seen, canceled(), after), names, NOW);
  t.like(both, { title: 'Payment arriving after closing' });
  t.regex(
    both.detail,
    /^Your payments of 4\.00 USDC reached this address \(3\.00 USDC of it sent before this checkout was canceled, the rest after\) and are being confirmed\. Once they are, /,
  );
});

test('the late money both pages tell of says how much of it was sent before the close: all of a payment seen before the cancel, or pending at an expiry in a log from before expiry waited for it; none of one seen after either', (t) => {
  const late = [detected('t1', '300000000'), canceled(), ...confirmedLate('t1', '300000000')];
  const session = sessionAfterEvents(...late, detected('after', '100000000', '2026-01-01T00:25:00.000Z'));
  t.like(lateMoney(session), { amount: 300000000n, sentBefore: 300000000n, refundedAt: null });
  t.true(allSentBefore(lateMoney(session)));
  t.like(confirmingAfterClose(session), { amount: 100000000n, sentBefore: 0n });
  t.false(allSentBefore(confirmingAfterClose(session)));
  const expired = sessionAfterEvents(
    detected('t1', '300000000'),
    { type: 'CheckoutSessionExpired', data: { at: '2026-01-01T01:00:00.000Z' } },
    ...confirmedLate('t1', '300000000', '2026-01-01T01:05:00.000Z'),
  );
  // Logs from before expiry waited for a payment confirming expired with one pending: sent before the
  // expiry, told so as after a cancel, not as arriving after it.
  t.like(lateMoney(expired), { amount: 300000000n, sentBefore: 300000000n, close: 'expiry' });
  const told = payerStatus(expired, names, NOW);
  t.is(told.title, 'Payment received, checkout expired');
  t.is(
    told.detail,
    'Your payment of 3.00 USDC was sent before this checkout expired. This money does not complete the expired checkout: the business has been notified and will settle it with you, by a refund or a credit. Do not send anything more to this address.',
  );
  const afterExpiry = sessionAfterEvents(
    { type: 'CheckoutSessionExpired', data: { at: '2026-01-01T01:00:00.000Z' } },
    detected('t1', '300000000', '2026-01-01T01:01:00.000Z'),
    ...confirmedLate('t1', '300000000', '2026-01-01T01:05:00.000Z'),
  );
  t.like(lateMoney(afterExpiry), { amount: 300000000n, sentBefore: 0n });
  // Still open: a payment confirming in time is not money after the close.
  t.like(confirmingAfterClose(sessionAfterEvents(detected('t1', '100000000'))), { amount: 0n, payments: [] });
});

test("whether a payment was sent before a cancel is told by the log's order, not by timestamps: one pending at the cancel in its very millisecond was sent before; one seen after it in that millisecond, or stamped earlier by a clock behind, after", (t) => {
  const AT = '2026-01-01T00:20:00.000Z';
  // Pending when the merchant canceled, in the same millisecond: the payer sent it before the cancel.
  const pendingAtCancel = [detected('t1', '300000000', AT), canceled(AT)];
  t.like(confirmingAfterClose(sessionAfterEvents(...pendingAtCancel)), { amount: 300000000n, sentBefore: 300000000n });
  t.is(payerStatus(sessionAfterEvents(...pendingAtCancel), names, NOW).title, 'Payment confirming, checkout canceled');
  const finalAfter = sessionAfterEvents(...pendingAtCancel, ...confirmedLate('t1', '300000000', AT));
  t.like(lateMoney(finalAfter), { amount: 300000000n, sentBefore: 300000000n });
  const told = payerStatus(finalAfter, names, NOW);
  t.is(told.title, 'Payment received, checkout canceled');
  t.notRegex(told.detail, /after this checkout was canceled/);
  // Seen after the cancel, in the same millisecond: after it.
  const seenAfter = [canceled(AT), detected('t1', '300000000', AT)];
  t.like(confirmingAfterClose(sessionAfterEvents(...seenAfter)), { amount: 300000000n, sentBefore: 0n });
  t.is(payerStatus(sessionAfterEvents(...seenAfter), names, NOW).title, 'Payment arriving after closing');
  const lateAfter = sessionAfterEvents(...seenAfter, ...confirmedLate('t1', '300000000', AT));
  t.like(lateMoney(lateAfter), { amount: 300000000n, sentBefore: 0n });
  t.is(payerStatus(lateAfter, names, NOW).title, 'Payment received after closing');
  // Seen after the cancel by an instance whose clock is a minute behind: after it all the same.
  const skewed = sessionAfterEvents(canceled(AT), detected('t1', '300000000', '2026-01-01T00:19:00.000Z'));
  t.like(confirmingAfterClose(skewed), { amount: 300000000n, sentBefore: 0n });
});

test('late dust (an 18-decimal payment under 10^-8, 0 at the 10^8 scale) is late money by the rule the sessions list and Home use: the payer of an expired session is told it arrived and will be settled, then that it was marked refunded', (t) => {
  const dust = { ...fineGrainedPayment('0', 'confirmed'), amountRaw: '1', late: true };
  const expired = sessionFixture({ status: 'expired', payments: [dust] });
  t.like(lateMoney(expired), { amount: 0n });
  const shown = payerStatus(expired, names, NOW);
  t.like(shown, { state: 'expired', title: 'Payment received after closing' });
  t.regex(shown.detail, /^Your payment of less than 0\.00000001 USDC was received after this checkout was expired\./);
  const marked = sessionFixture({
    status: 'expired',
    payments: [{ ...dust, coveredByRefundMark: true }],
    paymentIntent: {
      ...expired.paymentIntent,
      isMarkRefunded: true,
      markRefundedAt: '2026-01-02T09:00:00.000Z',
      markRefundedComment: null,
    },
  });
  t.like(payerStatus(marked, names, NOW), { state: 'expired', title: 'Payment marked refunded' });
});

test('the money a session received is split at its close: before it, and every late payment after it (dust, and what a mark of refunded covered, included), each summed exactly; nothing pending or withdrawn', (t) => {
  const half = { ...fineGrainedPayment('0', 'confirmed'), amountRaw: '5000000000', late: true };
  const session = sessionFixture({
    status: 'canceled',
    amountReceived: '100000001',
    payments: [
      payment('100000000', 'confirmed'),
      { ...payment('200000000', 'pending'), late: true },
      { ...payment('50000000', 'withdrawn'), transferId: 'gone' },
      { ...half, transferId: 'a', coveredByRefundMark: true },
      { ...half, transferId: 'b', seenBeforeClose: true },
    ],
  });
  const { beforeClose, afterClose } = receivedSplit(session);
  t.is(beforeClose.amount, 100000000n);
  t.deepEqual(
    beforeClose.payments.map((p) => p.transferId),
    [session.payments[0]!.transferId],
  );
  t.is(afterClose.amount, 1n, 'two half-units are one unit, not nothing');
  t.deepEqual(
    afterClose.payments.map((p) => p.transferId),
    ['a', 'b'],
  );
  t.like(afterClose, { sentBefore: 0n, close: 'the cancel' });
  const dust = receivedSplit(
    sessionFixture({
      status: 'expired',
      payments: [{ ...fineGrainedPayment('0', 'confirmed'), amountRaw: '1', late: true }],
    }),
  );
  t.like(dust, { beforeClose: { amount: 0n, payments: [] }, afterClose: { amount: 0n, close: 'expiry' } });
  t.is(dust.afterClose.payments.length, 1, 'dust is late money, though 0 at the 10^8 scale');
});

test("the status poll carries the page's split of a closed session's money: what came before the close and the late money, raw and formatted; all of it before the close when nothing came late", (t) => {
  const late = { ...payment('200000000', 'confirmed'), transferId: 't-late', late: true };
  const expired = sessionFixture({
    status: 'expired',
    amountReceived: '300000000',
    payments: [payment('100000000', 'confirmed'), late],
  });
  t.like(payerStatus(expired, names, NOW), {
    amountReceived: '300000000',
    amountReceivedFormatted: '3.00',
    amountReceivedBeforeClose: '100000000',
    amountReceivedBeforeCloseFormatted: '1.00',
    amountReceivedAfterClose: '200000000',
    amountReceivedAfterCloseFormatted: '2.00',
  });
  const dust = { ...fineGrainedPayment('0', 'confirmed'), amountRaw: '1', late: true };
  t.like(payerStatus(sessionFixture({ status: 'canceled', payments: [dust] }), names, NOW), {
    amountReceivedAfterClose: '0',
    amountReceivedAfterCloseFormatted: 'less than 0.00000001',
  });
  const open = sessionFixture({ amountReceived: '100000000', payments: [payment('100000000', 'confirmed')] });
  t.like(payerStatus(open, names, NOW), {
    amountReceivedBeforeClose: '100000000',
    amountReceivedBeforeCloseFormatted: '1.00',
    amountReceivedAfterClose: '0',
    amountReceivedAfterCloseFormatted: '0.00',
  });
});

test("the status poll's split of an 18-decimal session adds up to its amountReceived to the unit: the late part is the rest, not a second rounding down", (t) => {
  // 1.000000005 in time, 2.000000005 late: 3.00000001 received, each part half a unit over.
  const halfOver = (amount: string) => {
    const paid = fineGrainedPayment(amount, 'confirmed');
    return { ...paid, amountRaw: (BigInt(paid.amountRaw) + 5n * 10n ** 9n).toString() };
  };
  const session = sessionFixture({
    status: 'expired',
    amountReceived: '300000001',
    payments: [halfOver('100000000'), { ...halfOver('200000000'), transferId: 't-late', late: true }],
  });
  const status = payerStatus(session, names, NOW);
  t.like(status, {
    amountReceived: '300000001',
    amountReceivedBeforeClose: '100000000',
    amountReceivedBeforeCloseFormatted: '1.00',
    amountReceivedAfterClose: '200000001',
    amountReceivedAfterCloseFormatted: '2.00000001',
  });
  t.is(BigInt(status.amountReceivedBeforeClose) + BigInt(status.amountReceivedAfterClose), 300000001n);
});

test('the late amount the payer\'s status tells is its Paid row after the close to the unit: an 18-decimal session\'s on-time and late fractions make a unit, told as 0.00000001 in both, not "less than" in one', (t) => {
  // 1.000000005 in time, the cancel, 0.000000005 late: 1.00000001 received.
  const session = sessionAfterEvents(...lateHalfMakesAUnit());
  const status = payerStatus(session, names, NOW);
  t.like(status, {
    title: 'Payment received after closing',
    amountReceivedBeforeCloseFormatted: '1.00',
    amountReceivedAfterClose: '1',
    amountReceivedAfterCloseFormatted: '0.00000001',
  });
  t.regex(status.detail, /^Your payment of 0\.00000001 USDC was received after this checkout was canceled\./);
  t.is(lateMoney(session).amount, receivedSplit(session).afterClose.amount);
});

test('dust seen before the checkout was canceled and confirmed after it is told as sent before the cancel, as 3 USDC would be, though it reads 0 at the 10^8 scale', (t) => {
  const session = sessionAfterEvents(...dustSentBeforeCancel());
  const status = payerStatus(session, names, NOW);
  t.like(status, {
    state: 'canceled',
    title: 'Payment received, checkout canceled',
    amountReceivedAfterCloseFormatted: 'less than 0.00000001',
  });
  t.is(
    status.detail,
    'Your payment of less than 0.00000001 USDC was sent before this checkout was canceled. This money does not complete the canceled checkout: the business has been notified and will settle it with you, by a refund or a credit. Do not send anything more to this address.',
  );
  // Dust seen before the cancel, 1 USDC after: some of each, the dust not told as 0.00.
  const both = payerStatus(
    sessionAfterEvents(
      ...dustSentBeforeCancel(),
      detected('b', '100000000', '2026-01-01T00:21:00.000Z'),
      ...confirmedLate('b', '100000000'),
    ),
    names,
    NOW,
  );
  t.is(both.title, 'Payment received after closing');
  t.regex(
    both.detail,
    /^Your payments of 1\.00 USDC reached this address \(less than 0\.00000001 USDC of it sent before this checkout was canceled, the rest after\)\. This money does not complete/,
  );
});

test('a payer who paid part with the network fee on, then switches to an asset with no gas, is asked the exact rest, the first sweep still in the total; one whose money already covers the new total is told it is paid, and of the excess', (t) => {
  const given = givenWhenThen(checkoutSessionAggregate);
  const base = sessionFixture();
  const usdc = { ...base.addresses[0]!, gas: '160000', gasAmount: '1440000000' };
  const other = {
    ...usdc,
    id: 'addr-other',
    network: 'weir-other',
    asset: { ...usdc.asset, id: 'weir-other:usdc' },
    gas: '0',
    gasAmount: '0',
  };
  const at = new Date(NOW).toISOString();
  const run = (events: CheckoutSessionEvent[], ...commands: CheckoutSessionCommand[]) =>
    commands.reduce((log, command) => [...log, ...given(log).when(command, at)], events);
  const paidTo = (address: typeof usdc) =>
    run(
      [created(sessionFixture({ addresses: [usdc, other] }))],
      { type: 'SelectPaymentMethod', addressId: 'addr-usdc' },
      {
        type: 'RecordTransfer',
        payment: { ...paymentFixture('a', '1000000000'), network: address.network, asset: address.asset },
      },
      { type: 'ConfirmTransfer', transferId: 'a' },
      { type: 'SelectPaymentMethod', addressId: 'addr-other' },
    );
  const switched = payerStatus(given(paidTo(usdc)).state().context.session!, names, NOW);
  t.like(switched, { state: 'partly_paid', amountTotalFormatted: '17.40', amountToSend: '740000000' });
  t.is(switched.detail, '10.00 USDC of 17.40 USDC received. Send the remaining 7.40 USDC to finish.');
  // The 10 came in the asset with no gas (while USDC was chosen): choosing it leaves 3 owed, 7 over.
  const covered = payerStatus(given(paidTo(other)).state().context.session!, names, NOW);
  t.like(covered, { state: 'paid', title: 'Paid', amountTotalFormatted: '3.00' });
  t.is(
    covered.detail,
    'Payment received, thank you. You sent 7.00 USDC more than was due; contact the business about it.',
  );
});

test('late money its invoice counted while owed is told as the invoice’s (paid, or what it still owes), not as money to settle; more late money beside it is still to settle, alone, with the invoice’s part said too', (t) => {
  const late = [
    canceled('2026-01-01T00:20:00.000Z'),
    detected('b', '200000000', '2026-01-01T00:21:00.000Z'),
    ...confirmedLate('b', '200000000', '2026-01-01T00:25:00.000Z'),
  ];
  const paid = withInvoicePaidLate(sessionAfterEvents(...late), ['b']);
  const invoice = { number: 'INV-0007', status: 'paid' as const, amountRemaining: '0' };
  const shown = payerStatus(paid, names, NOW, undefined, undefined, null, invoice);
  t.like(shown, { state: 'canceled', title: 'Invoice paid' });
  t.is(
    shown.detail,
    'Your payment of 2.00 USDC was received after this checkout was canceled. Invoice INV-0007 counts 2.00 USDC received late and is paid. Do not send anything more to this address.',
  );
  const owing = payerStatus(paid, names, NOW, undefined, undefined, null, {
    ...invoice,
    status: 'open',
    amountRemaining: '100000000',
  });
  t.is(owing.title, 'Payment counted on the invoice');
  t.regex(owing.detail, /Invoice INV-0007 counts 2\.00 USDC received late; 1\.00 USDC is still due on it/);
  // Without its invoice read (a session read alone), the page speaks as before.
  t.is(payerStatus(sessionAfterEvents(...late), names, NOW).title, 'Payment received after closing');

  const more = withInvoicePaidLate(
    sessionAfterEvents(
      ...late,
      detected('c', '50000000', '2026-01-02T10:00:00.000Z'),
      ...confirmedLate('c', '50000000', '2026-01-02T10:05:00.000Z'),
    ),
    ['b'],
  );
  const both = payerStatus(more, names, NOW, undefined, undefined, null, invoice);
  t.is(both.title, 'Payment received after closing');
  t.is(
    both.detail,
    'Your payment of 0.50 USDC was received after this checkout was canceled. The business has been notified and will settle it with you, by a refund or a credit. Invoice INV-0007 counts 2.00 USDC received late and is paid. Do not send anything more to this address.',
  );
});
