import test from 'ava';
import { paymentFixture, sessionFixture } from '../../machines/checkout-session.fixture.ts';
import { TRON_LOCAL_CHAIN_ID } from '../chain-ingest/tron/networks.ts';
import { publicCheckoutSession } from './public-views.ts';

test('the public session leaves out what is the log’s and the operator’s: reconciliation credits, sweep broadcasts and drops', (t) => {
  const session = {
    ...sessionFixture(),
    _id: 'x',
    _revision: 3,
    reconciledTransfers: ['t'],
    sweepsBroadcast: [{ transactionHash: '0x1' }],
    sweepsDropped: ['0x2'],
  } as unknown as Parameters<typeof publicCheckoutSession>[0];
  const shown = publicCheckoutSession(session) as Record<string, unknown>;
  for (const key of ['_id', '_revision', 'environment', 'reconciledTransfers', 'sweepsBroadcast', 'sweepsDropped'])
    t.false(key in shown, key);
  t.is(shown.livemode, false);
  t.is(shown.id, session.id);
});

test('a Tron session shows its transaction and block hashes as Tron’s tools do (the bare txID), an EVM one as kept; the session keeps 0x', (t) => {
  const txid = 'cd'.repeat(32);
  const block = 'ab'.repeat(32);
  const tron = {
    ...paymentFixture('t1', '300000000'),
    chainId: TRON_LOCAL_CHAIN_ID,
    transactionHash: `0x${txid}`,
    blockHash: `0x${block}`,
  };
  const evm = paymentFixture('t2', '100000000');
  const paid = { status: 'confirmed', detectedAt: 'x', confirmedAt: 'x', late: false } as const;
  const base = sessionFixture();
  const session = {
    ...base,
    transactionHash: `0x${txid}`,
    payments: [
      { ...tron, ...paid },
      { ...evm, ...paid },
    ],
    sweeps: [{ network: 'tron-local', chainId: TRON_LOCAL_CHAIN_ID, transactionHash: `0x${'ef'.repeat(32)}` }],
    paymentIntent: {
      ...base.paymentIntent,
      paymentMethod: {
        id: 'pm',
        type: 'wallet',
        accountAddress: 'T…',
        asset: { ...tron.asset, chainId: TRON_LOCAL_CHAIN_ID },
        amountDue: '3000000',
        options: { wallet: { assetId: tron.asset.id, transactionHash: `0x${txid}`, contractAddress: 'T…' } },
      },
    },
  } as unknown as Parameters<typeof publicCheckoutSession>[0];
  const shown = publicCheckoutSession(session);
  t.is(shown.transactionHash, txid);
  t.is(shown.paymentIntent.paymentMethod?.options.wallet.transactionHash, txid);
  t.deepEqual(
    shown.paymentIntent.transactions.map((x) => x.transactionHash),
    [txid, evm.transactionHash],
  );
  t.deepEqual(
    shown.payments.map((p) => p.transactionHash),
    [txid, evm.transactionHash],
  );
  t.deepEqual(
    shown.payments.map((p) => p.blockHash),
    [block, evm.blockHash],
    'a Tron block id bare too',
  );
  t.true(evm.blockHash.startsWith('0x'));
  t.is(shown.sweeps[0]?.transactionHash, 'ef'.repeat(32));
  t.is(session.payments[0]?.transactionHash, `0x${txid}`, 'the document is left as it is');
  t.is(session.payments[0]?.blockHash, `0x${block}`);
});

test('a discount amount shows the coupon recorded with it, never an empty id, whatever the discounts list holds', (t) => {
  const base = sessionFixture();
  const session = {
    ...base,
    discounts: [],
    amountDetails: {
      ...base.amountDetails,
      discountAmounts: [{ amount: '30000000', couponId: 'c1', promotionCodeId: 'p1' }],
    },
  };
  t.deepEqual(publicCheckoutSession(session).amountDetails.discountAmounts, [
    { amount: '30000000', couponId: 'c1', promotionCodeId: 'p1' },
  ]);
});
