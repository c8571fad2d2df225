import test from 'ava';
import { detected } from '../../../../machines/checkout-session.fixture.ts';
import type { CheckoutSessionDoc } from '../../../projections/collections.ts';
import { PaymentIntentCard, Summary } from './detail.tsx';
import {
  CHOSE_USDC,
  COMPLETED_SHORT,
  customerDoc,
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
const factsOf = async (session: CheckoutSessionDoc) => factsIn(await Summary({ session }));

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
  const html = await Summary({ session: linked, customer: customerDoc('cus-1') });
  t.is(factsIn(html).Customer, 'Ada Lovelace');
  t.regex(html, /<a href="\/dashboard\/customers\/cus-1">Ada Lovelace<\/a>/);
  t.is(
    factsIn(await Summary({ session: linked, customer: customerDoc('cus-1', { name: null }) })).Customer,
    'ada@example.com',
  );
  const nameOnly = { name: 'Pat Doe', email: null, phone: null, address: null };
  t.is((await factsOf({ ...sessionAfter(), customerDetails: nameOnly })).Customer, 'Pat Doe');
  t.is((await factsOf({ ...sessionAfter(), customerDetails: null })).Customer, '—');
});
