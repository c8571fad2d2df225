import test from 'ava';
import { paymentFixture, sessionFixture } from '../../machines/checkout-session.fixture.ts';
import type { SessionPayment } from '../../machines/checkout-session.types.ts';
import { TRON_LOCAL_CHAIN_ID } from '../chain-ingest/tron/networks.ts';
import { taxedDiscountedSession } from '../hosted/totals.fixture.ts';
import { renderPaymentReceiptMail } from './payment-receipt-mail.ts';

const confirmed = (payment: ReturnType<typeof paymentFixture>): SessionPayment => ({
  ...payment,
  status: 'confirmed',
  detectedAt: '2026-01-01T00:10:00.000Z',
  confirmedAt: '2026-01-01T00:11:00.000Z',
  late: false,
});

test('the receipt names each transaction as its network’s tools show it: a Tron txID bare, an EVM hash with 0x', (t) => {
  const evm = paymentFixture('e1', '100000000');
  const tron = { ...paymentFixture('7a', '200000000'), network: 'tron-local', chainId: TRON_LOCAL_CHAIN_ID };
  const session = sessionFixture({ status: 'complete', payments: [confirmed(evm), confirmed(tron)] });
  const { text, html } = renderPaymentReceiptMail({
    session,
    receiptNumber: 'R-1',
    organization: null,
    customerName: null,
  });
  const bare = tron.transactionHash.slice(2);
  t.regex(text, new RegExp(`on tron-local: ${bare}$`, 'm'));
  t.notRegex(text, new RegExp(`0x${bare}`));
  t.regex(text, new RegExp(`on weir-testnet: ${evm.transactionHash}$`, 'm'));
  t.true(html.includes(`on tron-local: ${bare}`));
});

test('the receipt lists what makes its total: lines at price × quantity, the discount, each tax and the network fee', (t) => {
  // Lines showed their total with tax and no discount or fee row: 2.142857 of lines for a 1.652857 total.
  const session = taxedDiscountedSession();
  t.is(session.amountTotal, '165285700');
  const { text, html } = renderPaymentReceiptMail({
    session,
    receiptNumber: 'R-2',
    organization: null,
    customerName: null,
  });
  const block = text.slice(text.indexOf('2 × Tea'), text.indexOf('Amount received'));
  t.is(
    block,
    [
      '2 × Tea = 2.00 USDC',
      'Subtotal: 2.00 USDC',
      'Discount (SAVE): −0.50 USDC',
      'VAT (10%): 0.142857 USDC',
      'City tax (5%, included): 0.071429 USDC',
      'Network fee: 0.01 USDC',
      'Total: 1.652857 USDC',
      '',
    ].join('\n'),
  );
  t.true(html.includes('<div>Discount (SAVE): −0.50 USDC</div>'));
  t.true(html.includes('<div>Network fee: 0.01 USDC</div>'));
});
