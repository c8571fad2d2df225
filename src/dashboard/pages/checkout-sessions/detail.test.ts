import test from 'ava';
import { detected } from '../../../../machines/checkout-session.fixture.ts';
import type { CheckoutSessionDoc } from '../../../projections/collections.ts';
import { Summary } from './detail.tsx';
import { COMPLETED_SHORT, PAID_IN_FULL, PARTLY_PAID, sessionAfter } from './session-docs.fixture.ts';

/** The summary's facts, term to value. */
async function factsOf(session: CheckoutSessionDoc): Promise<Record<string, string>> {
  const html = await Summary({ session });
  const facts: Record<string, string> = {};
  for (const [, term, value] of html.matchAll(/<dt>(.*?)<\/dt><dd>(.*?)<\/dd>/g))
    facts[term!] = value!.replace(/<[^>]+>/g, '');
  return facts;
}

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
