import test from 'ava';
import type { CheckoutSessionDoc } from '../../../projections/collections.ts';
import { parseSessionsQuery } from './list-query.ts';
import { SessionsTable } from './list.tsx';
import { COMPLETED_SHORT, PAID_IN_FULL, PARTLY_PAID, sessionAfter } from './session-docs.fixture.ts';

/** The text of the Amount cell of the one row of `session` in the list. */
async function amountCell(session: CheckoutSessionDoc): Promise<string> {
  const html = await SessionsTable({ sessions: [session], count: 1, query: parseSessionsQuery({}).query });
  const cell = /<td class="amount">(.*?)<\/td>/s.exec(html)?.[1] ?? '';
  return cell
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

test('a session completed with part of its amount does not read as its total paid: the row says what was received', async (t) => {
  t.is(await amountCell(sessionAfter(...COMPLETED_SHORT)), '3.00 USDC 1.00 USDC received');
  t.is(await amountCell(sessionAfter(...PARTLY_PAID)), '3.00 USDC 1.00 USDC received');
});

test('a session paid in full, or paid nothing, shows its amount alone', async (t) => {
  t.is(await amountCell(sessionAfter(...PAID_IN_FULL)), '3.00 USDC');
  t.is(await amountCell(sessionAfter()), '3.00 USDC');
});

/** The text of the Customer cell of the one row of `session` in the list. */
async function customerCell(session: CheckoutSessionDoc): Promise<string> {
  const html = await SessionsTable({ sessions: [session], count: 1, query: parseSessionsQuery({}).query });
  return /<td class="hide-narrow">([^<]*)<\/td>/.exec(html)?.[1]?.trim() ?? '';
}

test('the customer column names the payer by email; a session without one shows its client reference as a reference, not as a customer', async (t) => {
  const session = sessionAfter();
  t.is(await customerCell({ ...session, customerDetails: null, clientReferenceId: 'INV-000001' }), 'Ref. INV-000001');
  t.is(await customerCell({ ...session, customerDetails: null, clientReferenceId: null }), '—');
  const paidBy = { ...session, clientReferenceId: 'INV-000001' };
  t.is(
    await customerCell({
      ...paidBy,
      customerDetails: { ...session.customerDetails, email: 'ada@example.com' },
    } as CheckoutSessionDoc),
    'ada@example.com',
  );
});
