import test from 'ava';
import { createTestRail } from '../../src/chain-ingest/test-rail.ts';
import type { Rail } from '../../src/chain-ingest/rail.ts';
import { toTronRailNetwork } from '../../src/chain-ingest/tron/define-network.ts';
import { TRON_LOCAL_CHAIN_ID, tronLocalNetwork } from '../../src/chain-ingest/tron/networks.ts';
import { apiClient, eventually } from '../support/api-client.ts';
import { chainPublisher, randomHash } from '../support/chain-publisher.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';
import { createMerchant, startTestWeir } from '../support/weir-harness.ts';
import { createCustomer } from './helpers.ts';

// The local Tron, offered by a rail of the test's own and fed through the bus as its follower would.
const TRON_LOCAL = toTronRailNetwork(
  tronLocalNetwork({ usdt: 'TNPeeaaFB7K9cmo4uQpcU32zGK8G1NYqeL', usdc: 'TBDCyrZ1hT1PDDFf2yRABwPrFica5qqPUX' }),
);
const DEPOSIT = 'TWd4WrZ9wn84f5x1hZhL4DHvk738ns5jwb';
const tronRail: Rail = {
  name: 'tron (test)',
  networks: (environment) => (environment === 'test' ? [TRON_LOCAL] : []),
  unpayableAddress: () => null,
  depositAddress: () => DEPOSIT,
  paymentRequest: ({ address, amountDue }) => ({
    uri: `tron:${address.paymentAddress}?amount=${amountDue}`,
    payee: address.paymentAddress,
  }),
};

type Invoice = { id: string; status: string; transactionHash: string | null };
type Hook = { type: string; data: { object: Invoice } };

test('an invoice paid on Tron shows the bare txID in the API (its session the bare block id too), its invoice.paid webhook and its hosted page, as its checkout session does', async (t) => {
  const weir = await startTestWeir(t, { testRail: false }, { extraRails: [createTestRail(), tronRail] });
  const { api } = await createMerchant(weir.url);
  const wallet = { chainId: TRON_LOCAL_CHAIN_ID, address: DEPOSIT, name: 'tron' };
  t.is((await api.post('/api/v1/organization/withdrawal-addresses', wallet)).status, 200);
  const receiver = await startWebhookReceiver();
  t.teardown(() => receiver.close());
  const hooks = { description: 'd', url: receiver.url, enabledEvents: { events: ['invoice.paid'] } };
  t.is((await api.post('/api/v1/webhook-endpoints', hooks)).status, 200);

  const customerId = await createCustomer(api);
  const lineItems = {
    data: [{ priceData: { currency: 'usdc', unitAmount: '300000000', productData: { name: 'Hour' } }, quantity: 1 }],
  };
  const invoice = (await api.post<Invoice>('/api/v1/invoices', { customerId, lineItems })).body;
  t.is((await api.post(`/api/v1/invoices/${invoice.id}/finalize`)).status, 200);
  const pay = await fetch(`${weir.url}/invoices/${invoice.id}/pay`, { redirect: 'manual' });
  const sessionId = pay.headers.get('location')!.split('/').pop()!;
  type Session = {
    status: string;
    transactionHash: string | null;
    addresses: { network: string; asset: { id: string; currency: string } }[];
    payments: { blockHash: string }[];
  };
  const session = (await api.get<Session>(`/api/v1/checkout/sessions/${sessionId}`)).body;
  const usdc = session.addresses.find((a) => a.network === 'tron-local' && a.asset.currency === 'usdc')!;
  const chosen = await apiClient(weir.url).post<{ address: string; amountDueRaw: string }>(
    `/checkout/${sessionId}/payment-method`,
    { assetId: usdc.asset.id },
  );
  t.is(chosen.status, 200, JSON.stringify(chosen.body));

  const chain = chainPublisher(weir.bus, TRON_LOCAL);
  const blockHash = randomHash();
  const transfer = await chain.transfer({
    to: chosen.body.address,
    amount: chosen.body.amountDueRaw,
    blockNumber: 5,
    blockHash,
  });
  await chain.final(5, blockHash);
  const txid = transfer.transactionHash.replace(/^0x/, '');

  const paid = await eventually(async () => {
    const current = (await api.get<Invoice>(`/api/v1/invoices/${invoice.id}`)).body;
    return current.status === 'paid' ? current : undefined;
  }, 'the invoice to be paid');
  t.is(paid.transactionHash, txid);
  const shown = (await api.get<Session>(`/api/v1/checkout/sessions/${sessionId}`)).body;
  t.is(shown.transactionHash, txid);
  t.deepEqual(
    shown.payments.map((p) => p.blockHash),
    [blockHash.replace(/^0x/, '')],
    'its block by the bare block id',
  );

  const [hook] = await receiver.waitFor((all) => all.length > 0);
  const body = JSON.parse(hook!.body) as Hook;
  t.is(body.type, 'invoice.paid');
  t.is(body.data.object.transactionHash, txid);

  const page = await (await fetch(`${weir.url}/invoices/${invoice.id}`)).text();
  t.true(page.includes(`<code id="transaction">${txid}</code>`));
});
