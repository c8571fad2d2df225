import test from 'ava';
import { invoiceFixture } from '../../machines/invoice.fixture.ts';
import { publicInvoice } from './invoices.projection.ts';

const TXID = 'ab'.repeat(32);
const paidWith = (transactionChainId?: number) =>
  invoiceFixture({
    status: 'paid',
    transactionHash: `0x${TXID}`,
    ...(transactionChainId !== undefined && { transactionChainId }),
  });

test('an invoice paid on Tron shows its transaction as the bare txID, as its checkout session does; elsewhere, or with the chain unknown, as recorded', (t) => {
  const tron = publicInvoice(paidWith(728126428));
  t.is(tron.transactionHash, TXID);
  t.false('transactionChainId' in tron, 'the chain only decides how the hash is shown');
  t.is(publicInvoice(paidWith(1)).transactionHash, `0x${TXID}`);
  t.is(publicInvoice(paidWith()).transactionHash, `0x${TXID}`, 'paid before the chain was recorded');
  t.is(publicInvoice(invoiceFixture()).transactionHash, null);
});
