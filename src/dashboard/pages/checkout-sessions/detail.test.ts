import test from 'ava';
import {
  confirmed,
  detected,
  dustSentBeforeCancel,
  lateHalfMakesAUnit,
} from '../../../../machines/checkout-session.fixture.ts';
import type { CheckoutSessionDoc } from '../../../projections/collections.ts';
import type { RecordedEvent } from '../../../event-store/event-store.ts';
import type {
  CheckoutSessionEvent,
  SessionLineItem,
  SessionSweep,
} from '../../../../machines/checkout-session.types.ts';
import { baseSepolia } from '../../../chain-ingest/evm/networks/base.ts';
import { toRailNetwork } from '../../../chain-ingest/evm/networks/define-network.ts';
import { DetailBody, LineItems, PaymentIntentCard, Summary } from './detail.tsx';
import { taxedDiscountedSession } from '../../../hosted/totals.fixture.ts';
import {
  CANCELED_WHILE_CONFIRMING,
  CHOSE_USDC,
  COMPLETED_SHORT,
  CONFIRMED_AFTER_CANCEL,
  customerDoc,
  DUST_AFTER_CANCEL,
  MARKED_REFUNDED,
  PAID_AFTER_CANCEL,
  PAID_AFTER_EXPIRY,
  PAID_AFTER_THE_CANCEL_TOO,
  PAID_LATE_AFTER_MARK,
  PAID_IN_FULL,
  PARTLY_PAID,
  sessionAfter,
} from './session-docs.fixture.ts';

/** A card's facts, term to value. */
function factsIn(html: string): Record<string, string> {
  const facts: Record<string, string> = {};
  for (const [, term, value] of html.matchAll(/<dt>(.*?)<\/dt><dd>(.*?)<\/dd>/g))
    facts[term!] = value!.replace(/<[^>]+>/g, '');
  return facts;
}

/** The summary's facts. */
const factsOf = async (session: CheckoutSessionDoc) => factsIn(await Summary({ session, timeZone: 'UTC' }));

test('a session paid in part nets what was received, not the total it asks (which the API reports as amountNet until it completes)', async (t) => {
  const session = sessionAfter(...PARTLY_PAID);
  t.is(session.amountNet, '300000000', "the API's amountNet is still of the total");
  t.like(await factsOf(session), { Amount: '3.00 USDC', Received: '1.00 USDC', Fee: '0.00 USDC', Net: '1.00 USDC' });
});

test('a session completed with the part received, and one paid in full, net what was received', async (t) => {
  t.like(await factsOf(sessionAfter(...COMPLETED_SHORT)), { Received: '1.00 USDC', Net: '1.00 USDC' });
  t.like(await factsOf(sessionAfter(...PAID_IN_FULL)), { Received: '3.00 USDC', Net: '3.00 USDC' });
});

test('an open session nothing reached yet nets nothing, and one whose payment is seen but not final nets nothing either', async (t) => {
  t.like(await factsOf(sessionAfter()), { Received: '0.00 USDC', Net: '0.00 USDC' });
  t.like(await factsOf(sessionAfter(detected('t1', '300000000'))), { Received: '0.00 USDC', Net: '0.00 USDC' });
});

test('a session paid in part is not called unpaid, nor said to expire: it waits for the rest with no end', async (t) => {
  const facts = await factsOf(sessionAfter(...PARTLY_PAID));
  t.is(facts.Payment, 'Part paid');
  t.is(facts.Expires, 'No longer: it waits for the rest');
});

test('a complete session says when it completed rather than when it would have expired; an open one when it expires', async (t) => {
  const complete = await factsOf(sessionAfter(...PAID_IN_FULL));
  t.like(complete, { Payment: 'Paid', Completed: '1 Jan, 00:12 UTC' });
  t.false('Expires' in complete);
  t.like(await factsOf(sessionAfter()), { Payment: 'Unpaid', Expires: '1 Jan, 01:00 UTC' });
});

/** The payment intent card's facts. */
const intentFactsOf = async (session: CheckoutSessionDoc) =>
  factsIn(
    await PaymentIntentCard({ detail: { session, timeline: [], deliveries: [], endpoints: new Map(), networks: [] } }),
  );

test("the payment intent of a session paid in part asks what the payer's page asks now, not the whole amount asked when chosen", async (t) => {
  const facts = await intentFactsOf(sessionAfter(CHOSE_USDC, ...PARTLY_PAID));
  t.like(facts, { 'Left to pay': '2.00 USDC', 'Asked when chosen': '3.00 USDC' });
  t.false('Amount due' in facts);
});

test('the payment intent asks the whole amount before any payment, once, and nothing once paid, covered or closed', async (t) => {
  const chosen = await intentFactsOf(sessionAfter(CHOSE_USDC));
  t.is(chosen['Left to pay'], '3.00 USDC');
  t.false('Asked when chosen' in chosen, 'the same amount is not shown twice');
  t.like(await intentFactsOf(sessionAfter(CHOSE_USDC, ...PAID_IN_FULL)), { 'Left to pay': '0.00 USDC' });
  // Seen but not yet confirmed: the payer's page asks nothing more.
  t.like(await intentFactsOf(sessionAfter(CHOSE_USDC, detected('t1', '300000000'))), { 'Left to pay': '0.00 USDC' });
  t.like(
    await intentFactsOf(
      sessionAfter(CHOSE_USDC, { type: 'CheckoutSessionExpired', data: { at: '2026-01-01T01:00:00.000Z' } }),
    ),
    { 'Left to pay': '—' },
  );
  t.like(await intentFactsOf(sessionAfter()), { 'Left to pay': '—' });
});

test("the payment intent's status reads as words, as the session's does, never its API value", async (t) => {
  const statusOf = async (session: CheckoutSessionDoc) => (await intentFactsOf(session)).Status;
  t.is(await statusOf(sessionAfter(CHOSE_USDC)), 'Awaiting payment');
  t.is(await statusOf(sessionAfter(CHOSE_USDC, detected('t1', '300000000'))), 'Payment in progress');
  // Part paid and confirmed, nothing on its way: the intent is still `processing`, but nothing is in progress.
  const short = sessionAfter(CHOSE_USDC, ...PARTLY_PAID);
  t.is(short.paymentIntent.status, 'processing');
  t.is(await statusOf(short), 'Awaiting the rest');
  // The rest seen but not yet confirmed: in progress again.
  t.is(await statusOf(sessionAfter(CHOSE_USDC, ...PARTLY_PAID, detected('t2', '200000000'))), 'Payment in progress');
  t.is(await statusOf(sessionAfter(CHOSE_USDC, ...PAID_IN_FULL)), 'Succeeded');
  t.is(
    await statusOf(sessionAfter({ type: 'CheckoutSessionExpired', data: { at: '2026-01-01T01:00:00.000Z' } })),
    'Canceled',
  );
});

test('the payment intent writes what is left as the other amounts are written (0.00 USDC, grouped, two decimals at least)', async (t) => {
  const facts = await intentFactsOf(sessionAfter(CHOSE_USDC, ...PAID_IN_FULL));
  t.like(facts, { Amount: '3.00 USDC', 'Left to pay': '0.00 USDC' });
});

test('a session linked to a customer names them in its summary, linked to their page, though it collected nothing; else what it collected', async (t) => {
  const linked = { ...sessionAfter(), customerDetails: null, customerId: 'cus-1' };
  const html = await Summary({ session: linked, customer: customerDoc('cus-1'), timeZone: 'UTC' });
  t.is(factsIn(html).Customer, 'Ada Lovelace');
  t.regex(html, /<a href="\/dashboard\/customers\/cus-1">Ada Lovelace<\/a>/);
  t.is(
    factsIn(await Summary({ session: linked, customer: customerDoc('cus-1', { name: null }), timeZone: 'UTC' }))
      .Customer,
    'ada@example.com',
  );
  const nameOnly = { name: 'Pat Doe', email: null, phone: null, address: null };
  t.is((await factsOf({ ...sessionAfter(), customerDetails: nameOnly })).Customer, 'Pat Doe');
  t.is((await factsOf({ ...sessionAfter(), customerDetails: null })).Customer, '—');
});

/** The session page's body as the route renders it, the fixture's network named with an explorer. */
async function bodyOf(session: CheckoutSessionDoc, timeline: RecordedEvent[] = [], canManage = false): Promise<string> {
  const network = { ...toRailNetwork(baseSepolia), network: 'weir-testnet', chainId: 7357, name: 'Weir Testnet' };
  return DetailBody({
    detail: { session, timeline, deliveries: [], endpoints: new Map(), networks: [network] },
    csrf: 'x',
    canManage,
    form: {},
    timeZone: 'UTC',
  });
}

/** The text of the card `id` in `html`, tags dropped and spaces squeezed. */
const cardText = (html: string, id: string): string =>
  (new RegExp(`<section[^>]*id="${id}"[\\s\\S]*?</section>`).exec(html)?.[0] ?? '')
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();

const LINE: SessionLineItem = {
  description: null,
  quantity: 3,
  price: {
    id: 'price-1',
    productId: 'prod-1',
    product: { id: 'prod-1', name: 'Flat white', description: null, isActive: true },
    type: 'one_time',
    currency: 'usdc',
    unitAmount: '100000000',
    interval: null,
    intervalCount: null,
    isActive: true,
  },
  amountSubtotal: '300000000',
  amountTotal: '300000000',
  currency: 'usdc',
};

test('the session page shows its line items (name × quantity, unit amount, line total), its checkout and success URLs', async (t) => {
  const session = { ...sessionAfter(...PAID_IN_FULL), lineItems: { object: 'list' as const, data: [LINE] } };
  const text = cardText(await bodyOf(session), 'line-items');
  t.regex(text, /Flat white × 3 1\.00 USDC 3\.00 USDC/);
  t.regex(text, /Checkout URL http:\/\/127\.0\.0\.1\/checkout\/11111111-1111-4111-8111-111111111111/);
  t.regex(text, /Success URL https:\/\/shop\.example\/ok/);
});

const SWEEP: SessionSweep = {
  network: 'weir-testnet',
  chainId: 7357,
  transactionHash: `0x${'5e'.repeat(32)}`,
  transferIds: ['t1'],
  gasUsed: '50000',
  gasCost: '1000000000000',
  at: '2026-01-01T00:20:00.000Z',
};

test('the session page shows each sweep: its transaction linked to the explorer, the wallet it went to and the amount it moved; the timeline says it too', async (t) => {
  const swept: CheckoutSessionEvent = { type: 'FundsSwept', data: { sweep: SWEEP } };
  const session = sessionAfter(...PAID_IN_FULL, swept);
  const timeline = [{ type: 'FundsSwept', data: swept.data, metadata: { occurredAt: SWEEP.at, actor: 'system' } }];
  const html = await bodyOf(session, timeline as unknown as RecordedEvent[]);
  t.true(html.includes(`href="https://sepolia.basescan.org/tx/${SWEEP.transactionHash}"`), 'explorer link');
  const text = cardText(html, 'sweeps');
  t.regex(text, /^Sweeps to your wallet .* 3\.00 USDC 0x5e5e5e5e…5e5e \(opens the explorer\) 0x5eA1fE…eA1f 1 Jan/);
  t.regex(cardText(html, 'timeline'), /Funds swept 3\.00 USDC to 0x5eA1fE…eA1f/);
});

test("a sweep goes to the wallet its event names; an older one without it, to its deposit's binding, however the addresses are cased", async (t) => {
  const named = { ...SWEEP, blockNumber: 12, merchantAddress: '0xC0FFEE0000000000000000000000000000C0FFEE' };
  const paid = sessionAfter(...PAID_IN_FULL, { type: 'FundsSwept', data: { sweep: named } });
  t.regex(cardText(await bodyOf(paid), 'sweeps'), / 0xC0FFEE…FFEE 1 Jan/);
  // An EVM deposit address is kept checksummed on the session, lowercase on its payments.
  const session = sessionAfter(...PAID_IN_FULL, { type: 'FundsSwept', data: { sweep: SWEEP } });
  const checksummed = session.addresses.map((a) => ({
    ...a,
    paymentAddress: a.paymentAddress.toUpperCase().replace('0X', '0x'),
  }));
  t.regex(cardText(await bodyOf({ ...session, addresses: checksummed }), 'sweeps'), / 0x5eA1fE…eA1f 1 Jan/);
});

test('every region of the session page has a name of its own, so a screen reader can tell the line items card from its table', async (t) => {
  const html = await bodyOf({ ...sessionAfter(...PARTLY_PAID), lineItems: { object: 'list', data: [LINE] } });
  const cards = [...html.matchAll(/<h2 id="[^"]+-title"[^>]*>([^<]*)<\/h2>/g)].map((m) => m[1]!);
  const tables = [...html.matchAll(/role="region" aria-label="([^"]*)"/g)].map((m) => m[1]!);
  t.true(cards.includes('Line items'));
  t.deepEqual(
    [...cards, ...tables].filter((name, i, all) => all.indexOf(name) !== i),
    [],
  );
});

test('a session that expired unpaid and was paid after reads as paid late, needing a refund or review, not as unpaid: the amount, who paid, and the way to mark it refunded', async (t) => {
  const session = sessionAfter(...PAID_AFTER_EXPIRY);
  t.is(session.paymentStatus, 'unpaid', 'the API keeps the reference semantics');
  t.like(await factsOf(session), {
    'Received before it expired': '0.00 USDC',
    'Paid late': '3.00 USDC',
    Payment: 'Paid late — needs refund or review',
  });
  const html = await bodyOf(session, [], true);
  t.regex(
    cardText(html, 'money-to-settle'),
    /^Paid late — needs refund or review 3\.00 USDC arrived after this session expired, so it did not complete .* refund the payer from your own wallet \(they paid from 0xbeef ?\), .* then mark it refunded here\./,
  );
  t.regex(html, /<form method="post" action="\/dashboard\/checkout-sessions\/[^"]+\/mark-refunded">/);
  t.regex(html, /name="markRefundedComment"/);
  // A viewer reads what is to be done, without the form.
  const viewed = await bodyOf(session);
  t.notRegex(viewed, /mark-refunded/);
  t.regex(cardText(viewed, 'money-to-settle'), /An admin or owner can mark it refunded once it is settled\.$/);
});

test('a session canceled and then paid reads as paid late too, saying it was canceled', async (t) => {
  const session = sessionAfter(...PAID_AFTER_CANCEL);
  t.is((await factsOf(session)).Payment, 'Paid late — needs refund or review');
  t.regex(cardText(await bodyOf(session), 'money-to-settle'), /3\.00 USDC arrived after this session was canceled,/);
});

test('late money marked refunded reads as settled: when, and the note; no form any more', async (t) => {
  const session = sessionAfter(...PAID_AFTER_EXPIRY, MARKED_REFUNDED);
  t.is((await factsOf(session)).Payment, 'Paid late — marked refunded');
  const html = await bodyOf(session, [], true);
  t.is(
    cardText(html, 'money-to-settle'),
    'Paid late — refunded 3.00 USDC arrived after this session expired. It was marked refunded on 2 Jan, 09:00 UTC . Note: sent back in 0xabc',
  );
  t.notRegex(html, /mark-refunded/);
});

test('money confirmed after late money was marked refunded is not covered by the mark: it alone needs the merchant again (what the mark covered is not asked twice), with no second mark offered', async (t) => {
  const session = sessionAfter(...PAID_AFTER_EXPIRY, MARKED_REFUNDED, ...PAID_LATE_AFTER_MARK);
  t.is((await factsOf(session)).Payment, 'Paid late — needs refund or review');
  const html = await bodyOf(session, [], true);
  t.regex(
    cardText(html, 'money-to-settle'),
    /^Paid late — needs refund or review 2\.00 USDC arrived after this session expired, .* It was marked refunded on 2 Jan, 09:00 UTC , and more arrived after that: the mark does not cover it and cannot be made again\./,
  );
  t.notRegex(html, /mark-refunded/);
});

test("money after a session completed short is paid and the merchant's to keep (information, not a call to act); an overpayment says to refund the excess; neither offers to mark the whole refunded", async (t) => {
  const late: CheckoutSessionEvent = {
    type: 'LatePaymentReceived',
    data: { transferId: 't2', amount: '100000000', at: '2026-01-01T00:20:00.000Z' },
  };
  const short = sessionAfter(...COMPLETED_SHORT, detected('t2', '100000000'), confirmed('t2'), late);
  t.like(await factsOf(short), { Payment: 'Paid', 'Paid late': '1.00 USDC' });
  const shortHtml = await bodyOf(short, [], true);
  t.regex(
    cardText(shortHtml, 'money-to-settle'),
    /^Paid after completion 1\.00 USDC arrived after this session was completed with the amount received \(it asked 3\.00 USDC\)\. It only makes up what was asked, so it is yours to keep: nothing to do\. To refund it instead, send it from your own wallet \(they paid from /,
  );
  t.notRegex(shortHtml, /id="money-to-settle"[^>]*card-attention|card-attention[^>]*id="money-to-settle"/);
  t.notRegex(shortHtml, /mark-refunded/);
  // The rest and more: the excess past the total is to refund, the late part still said.
  const past = sessionAfter(
    ...COMPLETED_SHORT,
    detected('t2', '100000000'),
    confirmed('t2'),
    late,
    detected('t3', '200000000'),
    confirmed('t3'),
    {
      type: 'OverpaymentReceived',
      data: { transferId: 't3', amount: '200000000', amountOverpaid: '100000000', at: '2026-01-01T00:21:00.000Z' },
    },
  );
  const pastHtml = await bodyOf(past, [], true);
  t.regex(
    cardText(pastHtml, 'money-to-settle'),
    /^Overpaid — refund the excess The payer sent 1\.00 USDC more than the total\. Refund the excess .* 1\.00 USDC arrived after this session was completed with the amount received/,
  );

  const over = sessionAfter(...PAID_IN_FULL, {
    type: 'OverpaymentReceived',
    data: { transferId: 't1', amount: '300000000', amountOverpaid: '50000000', at: '2026-01-01T00:12:00.000Z' },
  });
  const overHtml = await bodyOf(over, [], true);
  t.regex(
    cardText(overHtml, 'money-to-settle'),
    /^Overpaid — refund the excess The payer sent 0\.50 USDC more than the total\. Refund the excess to them from your own wallet/,
  );
  t.notRegex(overHtml, /mark-refunded/);
});

test('a payment still confirming after the session expired is announced as arriving late; a session with nothing to settle shows no such card', async (t) => {
  const expired: CheckoutSessionEvent = { type: 'CheckoutSessionExpired', data: { at: '2026-01-01T01:00:00.000Z' } };
  const arriving = sessionAfter(expired, detected('t9', '300000000', '2026-01-01T01:05:00.000Z'));
  t.regex(
    cardText(await bodyOf(arriving), 'money-to-settle'),
    /^Payment arriving after the session ended 3\.00 USDC reached the deposit address after this session expired; it is being confirmed\./,
  );
  for (const session of [
    sessionAfter(),
    sessionAfter(...PAID_IN_FULL),
    sessionAfter(expired),
    sessionAfter(...PARTLY_PAID),
  ])
    t.notRegex(await bodyOf(session), /money-to-settle/);
});

test('money sent before the session was canceled and confirmed after it is said as such, as the payer was told, not as arriving after the cancel; some of each says both', async (t) => {
  const before = sessionAfter(...CONFIRMED_AFTER_CANCEL);
  t.like(await factsOf(before), {
    'Confirmed after the cancel': '3.00 USDC',
    Payment: 'Confirmed after the cancel — needs refund or review',
  });
  const text = cardText(await bodyOf(before, [], true), 'money-to-settle');
  t.regex(
    text,
    /^Confirmed after the cancel — needs refund or review 3\.00 USDC was sent before this session was canceled and confirmed after it, so it did not complete the session and its payment status stays unpaid\. The payer&#39;s checkout page told them this money does not complete the canceled checkout and that you will settle it with them\./,
  );
  t.notRegex(text, /arrived after|arrived late/);
  t.regex(
    cardText(await bodyOf(sessionAfter(...CONFIRMED_AFTER_CANCEL, MARKED_REFUNDED)), 'money-to-settle'),
    /^Confirmed after the cancel — refunded 3\.00 USDC was sent before this session was canceled and confirmed after it\. It was marked refunded on /,
  );
  const both = sessionAfter(...CONFIRMED_AFTER_CANCEL, ...PAID_AFTER_THE_CANCEL_TOO);
  t.is((await factsOf(both)).Payment, 'Paid late — needs refund or review');
  t.regex(
    cardText(await bodyOf(both), 'money-to-settle'),
    /^Paid late — needs refund or review 4\.00 USDC was confirmed after this session was canceled \(3\.00 USDC of it sent before the cancel, the rest after\), so it did not complete the session .* The payer&#39;s checkout page told them this money does not complete the canceled checkout/,
  );
});

test('a payment sent before the session was canceled and still confirming is said as such, not as arriving after the session ended', async (t) => {
  const text = cardText(await bodyOf(sessionAfter(...CANCELED_WHILE_CONFIRMING)), 'money-to-settle');
  t.is(
    text,
    'Payment confirming after the cancel 3.00 USDC was sent before this session was canceled and is still being confirmed. Once confirmed it does not complete the session: it is a late payment, to refund or settle with the payer.',
  );
  const both = sessionAfter(...CANCELED_WHILE_CONFIRMING, detected('t2', '100000000', '2026-01-01T00:40:00.000Z'));
  t.regex(
    cardText(await bodyOf(both), 'money-to-settle'),
    /^Payment arriving after the session ended 4\.00 USDC reached the deposit address \(3\.00 USDC of it sent before this session was canceled, the rest after\); it is being confirmed\. Once confirmed it does not complete the session: it is a late payment/,
  );
});

test("a closed session's summary says what it received before it closed apart from the late money, as the late-money card does: a merchant does not read the money to refund as the order paid", async (t) => {
  const canceled = await factsOf(sessionAfter(...PAID_AFTER_CANCEL));
  t.like(canceled, { 'Received before the cancel': '0.00 USDC', 'Paid late': '3.00 USDC' });
  t.false('Received' in canceled);
  // Sent before the cancel, confirmed after it: named as the card names it.
  t.like(await factsOf(sessionAfter(...CONFIRMED_AFTER_CANCEL)), {
    'Received before the cancel': '0.00 USDC',
    'Confirmed after the cancel': '3.00 USDC',
  });
  // Money after a short completion is the merchant's to keep: still in Received.
  t.like(await factsOf(sessionAfter(...PAID_IN_FULL)), { Received: '3.00 USDC' });
});

test('late dust (an 18-decimal payment under 10^-8, 0 at the 10^8 scale) reads as late money on the session page as the list badges it and Home lists it: less than the smallest amount shown, to refund or review, and markable', async (t) => {
  const session = sessionAfter(...DUST_AFTER_CANCEL);
  t.like(await factsOf(session), {
    'Received before the cancel': '0.00 USDC',
    'Paid late': 'less than 0.00000001 USDC',
    Payment: 'Paid late — needs refund or review',
  });
  const html = await bodyOf(session, [], true);
  t.regex(
    cardText(html, 'money-to-settle'),
    /^Paid late — needs refund or review Less than 0\.00000001 USDC arrived after this session was canceled, so it did not complete/,
  );
  t.regex(html, /\/mark-refunded">/);
  t.is((await factsOf(sessionAfter(...DUST_AFTER_CANCEL, MARKED_REFUNDED))).Payment, 'Paid late — marked refunded');
});

test("the late-money card tells the Summary's late row to the unit: an 18-decimal session's on-time and late fractions make a unit, 0.00000001 in both; dust sent before the cancel is named and told as sent before it", async (t) => {
  // 1.000000005 in time, the cancel, 0.000000005 late: 1.00000001 received.
  const unit = sessionAfter(...lateHalfMakesAUnit());
  t.like(await factsOf(unit), { 'Received before the cancel': '1.00 USDC', 'Paid late': '0.00000001 USDC' });
  t.regex(
    cardText(await bodyOf(unit), 'money-to-settle'),
    /^Paid late — needs refund or review 0\.00000001 USDC arrived after this session was canceled/,
  );
  const dustBefore = sessionAfter(...dustSentBeforeCancel());
  t.like(await factsOf(dustBefore), {
    'Confirmed after the cancel': 'less than 0.00000001 USDC',
    Payment: 'Confirmed after the cancel — needs refund or review',
  });
  t.regex(
    cardText(await bodyOf(dustBefore), 'money-to-settle'),
    /^Confirmed after the cancel — needs refund or review Less than 0\.00000001 USDC was sent before this session was canceled and confirmed after it, .* told them this money does not complete the canceled checkout/,
  );
});

test('money pending when the session expired (a log from before expiry waited for it) and confirmed after reads as sent before the expiry, as a cancel is told, not as arriving after it', async (t) => {
  const session = sessionAfter(
    detected('t1', '300000000', '2026-01-01T00:50:00.000Z'),
    { type: 'CheckoutSessionExpired', data: { at: '2026-01-01T01:00:00.000Z' } },
    confirmed('t1', '2026-01-01T01:06:00.000Z'),
    { type: 'LatePaymentReceived', data: { transferId: 't1', amount: '300000000', at: '2026-01-01T01:06:00.000Z' } },
  );
  t.like(await factsOf(session), {
    'Received before it expired': '0.00 USDC',
    'Confirmed after expiry': '3.00 USDC',
    Payment: 'Confirmed after expiry — needs refund or review',
  });
  t.regex(
    cardText(await bodyOf(session), 'money-to-settle'),
    /^Confirmed after expiry — needs refund or review 3\.00 USDC was sent before this session expired and confirmed after it, so it did not complete .* The payer&#39;s checkout page told them this money does not complete the expired checkout/,
  );
});

test("a closed session that got late money nets what came before the close less Weir's fee (never below nothing), saying late money is not in it; an open or complete session's Net is as before, with no note", async (t) => {
  // The API's amountNet of an open or closed session is the total less the fee.
  const withFee = (session: CheckoutSessionDoc, amountFee: string) => ({
    ...session,
    amountFee,
    amountNet: (BigInt(session.amountTotal) - BigInt(amountFee)).toString(),
  });
  const netOf = async (session: CheckoutSessionDoc) => (await factsOf(session)).Net?.replaceAll('&#39;', "'");
  t.is(
    await netOf(sessionAfter(...PAID_AFTER_CANCEL)),
    "0.00 USDCLate money (3.00 USDC) is not in it. The API's amountNet (3.00 USDC) is what it would have netted if paid in full.",
  );
  // Some paid before the close (an old log's expiry of a session paid in part), a fee, then late money.
  const before = sessionAfter(detected('t1', '100000000'), confirmed('t1'), ...PAID_AFTER_EXPIRY);
  t.like(await factsOf(withFee(before, '1000000')), {
    'Received before it expired': '1.00 USDC',
    'Paid late': '3.00 USDC',
  });
  t.is(
    await netOf(withFee(before, '1000000')),
    "0.99 USDCLate money (3.00 USDC) is not in it. The API's amountNet (2.99 USDC) is what it would have netted if paid in full.",
  );
  t.regex((await factsOf(withFee(sessionAfter(...PAID_AFTER_EXPIRY), '1000000'))).Net ?? '', /^0\.00 USDCLate money/);
  t.regex((await factsOf(sessionAfter(...DUST_AFTER_CANCEL))).Net ?? '', /Late money \(less than 0\.00000001 USDC\)/);
  // Open, paid in part: what arrived, less the fee, and no note though amountNet (of the total) differs.
  t.is((await factsOf(withFee(sessionAfter(...PARTLY_PAID), '1000000'))).Net, '0.99 USDC');
  t.is((await factsOf(sessionAfter())).Net, '0.00 USDC');
  t.is((await factsOf(sessionAfter(...PAID_IN_FULL))).Net, '3.00 USDC');
  // Closed with nothing late, the note says only why amountNet differs.
  t.is(
    await netOf(sessionAfter({ type: 'CheckoutSessionExpired', data: { at: '2026-01-01T01:00:00.000Z' } })),
    "0.00 USDCThe API's amountNet (3.00 USDC) is what it would have netted if paid in full.",
  );
});

test('a dust payment (an 18-decimal transfer under 10^-8) shows its exact amount in the payments table, never 0.00', async (t) => {
  const html = cardText(await bodyOf(sessionAfter(...DUST_AFTER_CANCEL)), 'transactions');
  t.regex(html, /0\.000000000000000001 USDC/);
  t.notRegex(html, /\b0\.00 USDC/);
  t.regex(cardText(await bodyOf(sessionAfter(...PAID_AFTER_CANCEL)), 'transactions'), /3\.00 USDC/);
});

test('the line items card makes the total as the hosted page does: lines at price × quantity, then discount, each tax, network fee and total', async (t) => {
  // Lines showed their total with tax, and nothing showed the discount or the fee: 2.142857 of lines for a 1.652857 session.
  const session = { ...taxedDiscountedSession(), _id: 'cs-1' } as CheckoutSessionDoc;
  const html = await LineItems({ session });
  const cells = [...html.matchAll(/<tr[^>]*>(.*?)<\/tr>/gs)].map(([, row]) =>
    [...row!.matchAll(/<t[dh][^>]*>(.*?)<\/t[dh]>/gs)].map(([, cell]) => cell!.replace(/<[^>]+>/g, '').trim()),
  );
  t.deepEqual(cells, [
    ['Item', 'Unit amount', 'Amount'],
    ['Tea × 2', '1.00 USDC', '2.00 USDC'],
    ['Subtotal', '2.00 USDC'],
    ['Discount (SAVE)', '−0.50 USDC'],
    ['VAT (10%)', '0.142857 USDC'],
    ['City tax (5%, included)', '0.071429 USDC'],
    ['Network fee', '0.01 USDC'],
    ['Total', '1.652857 USDC'],
  ]);
});

test('an overpaid session names the excess and the whole address to refund it to, wrapping (the payments table only cuts it, and hides it on a phone)', async (t) => {
  const over = sessionAfter(...PAID_IN_FULL, {
    type: 'OverpaymentReceived',
    data: { transferId: 't1', amount: '300000000', amountOverpaid: '50000000', at: '2026-01-01T00:12:00.000Z' },
  });
  const payer = '0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65';
  const session = { ...over, payments: over.payments.map((p) => ({ ...p, fromAddress: payer })) };
  const html = await bodyOf(session, [], true);
  t.regex(
    cardText(html, 'money-to-settle'),
    new RegExp(`Excess to refund 0\\.50 USDC Refund to ${payer} on Weir Testnet`),
  );
  t.regex(html, new RegExp(`<code class="break refund-address">${payer}</code>`));
});
