import test from 'ava';
import { bscTestnet } from '../../src/chain-ingest/evm/networks/bsc.ts';
import { toRailNetwork } from '../../src/chain-ingest/evm/networks/define-network.ts';
import { apiClient, eventually } from '../support/api-client.ts';
import { chainPublisher, randomHash } from '../support/chain-publisher.ts';
import { createMerchant, MERCHANT_WALLET, sessionRequest, startTestWeir } from '../support/weir-harness.ts';
import { getSession, type Revealed } from './helpers.ts';

const BSC_TESTNET = bscTestnet.chainId;
type Status = {
  state: string;
  detail: string;
  amountToSend: string;
  payment: { amountDueRaw: string; decimals: number } | null;
};

test('a session partly paid in 18-decimal USDC takes the rest in 6-decimal USDC: the page asks the rest rounded up to 10^-6, and paying that completes it', async (t) => {
  // BSC testnet offered (its USDC has 18 decimals); no follower runs, the test publishes its transfers.
  const weir = await startTestWeir(
    t,
    {
      chainEnv: {
        [`WEIR_RPC_${BSC_TESTNET}`]: 'http://127.0.0.1:9',
        [`WEIR_FACTORY_${BSC_TESTNET}`]: '0x00000000000000000000000000000000000fac70',
      },
    },
    { evmFollowers: false },
  );
  const { api } = await createMerchant(weir.url);
  const wallet = await api.post('/api/v1/organization/withdrawal-addresses', {
    chainId: BSC_TESTNET,
    address: MERCHANT_WALLET,
    name: 'bsc',
  });
  t.is(wallet.status, 200, JSON.stringify(wallet.body));
  const created = await api.post<{ id: string; addresses: { asset: { id: string; chainId: number } }[] }>(
    '/api/v1/checkout/sessions',
    sessionRequest('300000000', 1),
  );
  t.is(created.status, 200, JSON.stringify(created.body));
  const session = created.body;
  const bscUsdc = session.addresses.find((a) => a.asset.chainId === BSC_TESTNET)!.asset.id;
  const usdc = session.addresses.find((a) => a.asset.chainId === 7357)!.asset.id;
  const payer = apiClient(weir.url);
  const choose = (assetId: string) => payer.post<Revealed>(`/checkout/${session.id}/payment-method`, { assetId });

  // 0.123456789012345678 USDC of 3 paid on BSC: 2.876543210987654322 left, finer than 6 decimals.
  const onBsc = await choose(bscUsdc);
  t.is(onBsc.status, 200);
  const bsc = chainPublisher(weir.bus, toRailNetwork(bscTestnet));
  const bscBlock = { blockNumber: 50, blockHash: randomHash() };
  await bsc.transfer({ to: onBsc.body.address, amount: '123456789012345678', ...bscBlock });
  await bsc.final(bscBlock.blockNumber, bscBlock.blockHash);
  await eventually(
    async () => ((await getSession(api, session.id)).status === 'incomplete' ? true : undefined),
    'the session to be partly paid',
  );

  // The rest in 6-decimal USDC: rounded up to its smallest unit, on the route and the status alike.
  const rest = await choose(usdc);
  t.is(rest.status, 200, JSON.stringify(rest.body));
  t.is(rest.body.amountDueRaw, '2876544');
  const status = (await payer.get<Status>(`/checkout/${session.id}/status`)).body;
  t.is(status.payment?.amountDueRaw, '2876544');
  // The page's words ask what the request asks, not the rest on the 10^8 scale (2.87654322).
  t.is(status.amountToSend, '287654400');
  t.regex(status.detail, /Send the remaining 2\.876544 USDC to finish/);

  const chain = chainPublisher(weir.bus);
  const block = { blockNumber: 60, blockHash: randomHash() };
  await chain.transfer({ to: rest.body.address, amount: rest.body.amountDueRaw, ...block });
  await chain.final(block.blockNumber, block.blockHash);
  const paid = await eventually(async () => {
    const s = await getSession(api, session.id);
    return s.status === 'complete' ? s : undefined;
  }, 'the session to complete');
  // Never less than owed: 0.000000789012345678 over, shown rounded down.
  t.is(paid.amountReceived, '300000078');
  t.is((paid as typeof paid & { amountOverpaid: string }).amountOverpaid, '78');
});
