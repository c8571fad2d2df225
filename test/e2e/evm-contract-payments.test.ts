import test, { type ExecutionContext } from 'ava';
import { getAddress, pad, type Address, type Hex } from 'viem';
import { RECONCILIATION_TRANSACTION_PREFIX } from '../../machines/checkout-session.types.ts';
import { SWEEPS, type SweepDoc } from '../../src/projections/sweeps.projection.ts';
import { apiClient, eventually } from '../support/api-client.ts';
import type { WeirOverrides } from '../../src/app/start-weir.ts';
import { startDevnetWeir } from '../support/devnet-weir.ts';
import { devnetPayer } from '../support/evm-devnet.ts';

/**
 * A payer whose wallet is a contract (a Safe, a smart account, an exchange's batch payout) sends
 * native coin by an internal call, which no transaction's `value` shows: the balance reconciler
 * finds it in the deposit's balance and the session is paid with no recovery by the merchant.
 */

/**
 * A contract that pays the address its calldata holds (32 bytes) all it is sent, by an internal CALL,
 * as a smart wallet or batch payout does; hand-assembled so the test compiles nothing:
 * `CALL(gas, calldata[0:32], callvalue, 0, 0, 0, 0)`, reverting if that call fails.
 */
const PAY_THROUGH: Hex = `0x601980600b6000396000f3${'6000'.repeat(4)}346000355af115601357005b60006000fd`;

type Session = {
  id: string;
  sweeps: { transactionHash: string }[];
  status: string;
  amountReceived: string;
  addresses: { paymentAddress: string }[];
  paymentIntent: { transactions: { transactionHash: string; status: string; blockNumber: number }[] };
};

const HALF_CENT_OF_ETH = 5n * 10n ** 15n; // 0.005 ETH: half of unit amount 1000000 (0.01 ETH)

/** A Weir on anvil with a shop, a payer, the forwarding contract deployed, and the shop's sessions. */
async function contractPayment(t: ExecutionContext, overrides: WeirOverrides) {
  const weir = await startDevnetWeir(t, { node: 'anvil', confirmations: 1, overrides });
  const shop = await weir.organization('Smart Wallet Shop');
  const payer = devnetPayer(weir.devnet.info);
  const { publicClient, walletClient } = payer.clients;
  const contract = (
    await publicClient.waitForTransactionReceipt({ hash: await walletClient.sendTransaction({ data: PAY_THROUGH }) })
  ).contractAddress as Address;
  const createSession = async (name: string) => {
    const created = await shop.api.post<Session>('/api/v1/checkout/sessions', {
      successUrl: 'https://shop.example/ok',
      lineItems: {
        data: [{ priceData: { currency: 'eth', unitAmount: '1000000', productData: { name } }, quantity: 1 }],
      },
    });
    t.is(created.status, 200, JSON.stringify(created.body));
    return { id: created.body.id, deposit: getAddress(created.body.addresses[0]!.paymentAddress) };
  };
  /** Half the price to `deposit` by the contract's internal CALL, which no transaction's `value` shows. */
  const payThroughContract = async (deposit: Address) => {
    const hash = await walletClient.sendTransaction({ to: contract, data: pad(deposit), value: HALF_CENT_OF_ETH });
    t.is((await publicClient.waitForTransactionReceipt({ hash })).status, 'success');
    return hash;
  };
  return { ...weir, shop, payer, publicClient, contract, createSession, payThroughContract };
}

test('ETH a contract forwards to a deposit address is credited by the balance reconciler beside a direct payment, and a later recovery of it counts nothing twice', async (t) => {
  const { shop, payer, publicClient, contract, createSession, payThroughContract } = await contractPayment(t, {
    evmFollowers: true,
    evmReconcileIntervalMs: 100,
  });
  const created = await createSession('Thing');
  const deposit = created.deposit;
  const get = async () => (await shop.api.get<Session>(`/api/v1/checkout/sessions/${created.id}`)).body;

  // Half paid directly (the follower sees it), half through the contract (an internal CALL).
  const direct = await payer.payNative(deposit, HALF_CENT_OF_ETH);
  await eventually(async () => ((await get()).amountReceived === '500000' ? true : undefined), 'the direct half');
  const internal = await payThroughContract(deposit);
  t.is(await publicClient.getBalance({ address: contract }), 0n, 'the contract sent it all on');

  const paid = await eventually(async () => {
    const s = await get();
    return s.status === 'complete' && s.paymentIntent.transactions.every((x) => x.status === 'confirmed')
      ? s
      : undefined;
  }, 'the reconciler to credit the internal half');
  t.is(paid.amountReceived, '1000000', 'the direct half is not counted again');
  const hashes = paid.paymentIntent.transactions.map((x) => x.transactionHash);
  t.is(hashes.length, 2);
  t.true(hashes.includes(direct.hash));
  t.true(
    hashes.some((h) => h.startsWith(RECONCILIATION_TRANSACTION_PREFIX)),
    JSON.stringify(hashes),
  );

  // The merchant recovers the internal transaction all the same: its money is the credit's, not counted twice.
  const recovered = await shop.api.post<Session>('/api/v1/checkout/sessions/auto-recover-by-transaction-hash', {
    chainId: 31337,
    transactionHash: internal,
  });
  t.is(recovered.status, 200, JSON.stringify(recovered.body));
  t.is(recovered.body.amountReceived, '1000000');
  t.is((await get()).paymentIntent.transactions.length, 2);
});

test("ETH a contract forwarded that a sweep flushed before the reconciler saw it is credited in the sweep's block and recorded as moved by that sweep: the deposit waits for nothing", async (t) => {
  // No reconciler at first: the sweep of the direct half flushes the unseen internal half with it.
  const { weir, shop, payer, publicClient, restart, createSession, payThroughContract } = await contractPayment(t, {
    evmFollowers: true,
    evmReconciler: false,
  });
  const created = await createSession('Thing');
  const deposit = created.deposit;
  const get = async () => (await shop.api.get<Session>(`/api/v1/checkout/sessions/${created.id}`)).body;

  await payThroughContract(deposit);
  await payer.payNative(deposit, HALF_CENT_OF_ETH);
  const swept = await eventually(async () => {
    const s = await get();
    return s.sweeps.length === 1 ? s : undefined;
  }, 'the sweep of the direct half');
  t.is(swept.amountReceived, '500000');
  t.is(await publicClient.getBalance({ address: deposit }), 0n, 'the sweep flushed both halves');
  // A block after the sweep's (a live chain goes on), which the follower processed before the reconciler starts: another session paid in it.
  const sweepBlock = (await publicClient.getTransactionReceipt({ hash: swept.sweeps[0]!.transactionHash as Hex }))
    .blockNumber;
  const other = await createSession('Other');
  const later = await payer.payNative(other.deposit, HALF_CENT_OF_ETH);
  t.true((await publicClient.getTransactionReceipt({ hash: later.hash })).blockNumber > sweepBlock);
  await eventually(
    async () =>
      (await shop.api.get<Session>(`/api/v1/checkout/sessions/${other.id}`)).body.amountReceived === '500000'
        ? true
        : undefined,
    'the follower past the sweep block',
  );

  // The reconciler on: it finds the internal half in what the sweep flushed.
  const lines: string[] = [];
  const again = await restart(weir, {
    evmReconciler: true,
    evmReconcileIntervalMs: 100,
    log: (line) => void lines.push(line),
  });
  const api = apiClient(again.url, shop.testSecretKey);
  const sessionNow = async () => (await api.get<Session>(`/api/v1/checkout/sessions/${created.id}`)).body;
  const paid = await eventually(async () => {
    const s = await sessionNow();
    return s.status === 'complete' && s.paymentIntent.transactions.every((x) => x.status === 'confirmed')
      ? s
      : undefined;
  }, 'the reconciler to credit the swept internal half');
  t.is(paid.amountReceived, '1000000');
  const credit = paid.paymentIntent.transactions.find((x) =>
    x.transactionHash.startsWith(RECONCILIATION_TRANSACTION_PREFIX),
  );
  t.truthy(credit, JSON.stringify(paid.paymentIntent.transactions));

  // The sweeper finds the credit moved by the sweep, or (before) backed off on it as on money a flush it never recorded took.
  const backedOff = (line: string) => line.includes('confirmed transfer(s) are not recorded as swept');
  const sweeps = again.readStore.collection<SweepDoc>(SWEEPS);
  const outcome = await eventually(async () => {
    if (lines.some(backedOff)) return 'backed off';
    const events = await again.eventStore.readStream(`checkout_session-${created.id}`);
    const found = events.find((e) => e.type === 'TransfersFoundSwept');
    const doc = (await sweeps.find({ checkoutSessionId: created.id }))[0];
    return found && doc && !doc.pending ? { found, doc } : undefined;
  }, 'the credit recorded as swept');
  t.not(outcome, 'backed off', lines.filter(backedOff).join('\n'));
  if (outcome === 'backed off') return;
  const data = outcome.found.data as { transactionHash: string; transferIds: string[] };
  t.is(data.transactionHash, swept.sweeps[0]!.transactionHash, 'moved by the sweep that flushed it');
  t.true(
    data.transferIds.some((id) => id.includes(credit!.transactionHash)),
    JSON.stringify(data.transferIds),
  );
  t.deepEqual(outcome.doc.transferIds, []);
  t.deepEqual((await sessionNow()).sweeps.length, 1);
  t.is(BigInt(credit!.blockNumber), sweepBlock, 'credited in the block of the sweep that flushed it');
});
