import test from 'ava';
import QRCode from 'qrcode';
import { apiClient } from '../support/api-client.ts';
import { forwarderAbi } from '../../src/chain-ingest/evm/contracts/abis.ts';
import { tronAddressProblem, tronToEvm } from '../../src/chain-ingest/tron/address.ts';
import { TRON_LOCAL_CHAIN_ID } from '../../src/chain-ingest/tron/networks.ts';
import { createManualClock } from '../../src/shared/clock.ts';
import { bodySignature } from '../../src/webhooks/signature.ts';
import { startTronWeir, txIdOf, type TronSession } from '../support/tron-weir.ts';

/*
 * Tron payments end to end through the local Tron: the contracts run on anvil, Weir reads them
 * through the Tron-flavoured JSON-RPC proxy (finalized = solidified, 3 blocks behind the head
 * here; blocks with an all-zero logsBloom as java-tron answers). Where the proxy cannot be
 * faithful: anvil derives CREATE2 with the prefix 0xff, so on the local chain the deposit
 * address is the 0xff one (the one the factory deploys to there); the TVM's 0x41 derivation is
 * proven against Tron's documented examples in src/chain-ingest/tron/deposit-address.test.ts.
 * The local USDT returns false from a transfer that succeeded, as Tron mainnet's does, and the
 * factory is built with the Tron forwarder, which checks its balance instead of that value.
 * Energy and bandwidth do not exist on anvil (the sweep's gas stands in for them).
 */

const DEPTH = 3;

const isTron = (value: string) => tronAddressProblem(value) === null;

test('a USDT payment completes the session with T… addresses everywhere, the signed webhook arrives, and the sweep moves it to the merchant', async (t) => {
  const w = await startTronWeir(t, { finalizedDepth: DEPTH });
  const s = await w.session('usdt', '2500000000'); // 25 USDT
  const usdt = s.addresses.find((a) => a.asset.currency === 'usdt')!;
  t.is(usdt.network, 'tron-local');
  t.is(usdt.asset.chainId, TRON_LOCAL_CHAIN_ID);
  t.is(usdt.asset.address, w.tokens.usdt);
  t.true(isTron(usdt.paymentAddress), usdt.paymentAddress);
  t.is(usdt.merchantAddress, w.merchant);
  const reveal = await apiClient(w.weir.url).post<{
    amountDueRaw: string;
    address: string;
    paymentUri: string;
    qrSvg: string;
  }>(`/checkout/${s.id}/payment-method`, { assetId: usdt.asset.id });
  t.is(reveal.body.amountDueRaw, '25000000');
  t.is(reveal.body.paymentUri, `tron:${usdt.paymentAddress}?amount=25&token=${w.tokens.usdt}`);
  t.is(reveal.body.address, usdt.paymentAddress);
  // Tron wallets scan a bare address (the amount is shown beside the code): the QR holds it, not the tron: URI.
  const addressQr = await QRCode.toString(usdt.paymentAddress, { type: 'svg', margin: 1 });
  t.is(reveal.body.qrSvg, addressQr);
  const polled = await apiClient(w.weir.url).get<{ payment: { qrSvg: string } }>(`/checkout/${s.id}/status`);
  t.is(polled.body.payment.qrSvg, addressQr, 'and so does the QR the page polls for');
  // The hosted page offers the Tron assets by name with their icons (address, QR and copy come with the reveal above).
  const page = await fetch(`${w.weir.url}/checkout/${s.id}`);
  const html = await page.text();
  t.is(page.status, 200);
  t.regex(html, /Local Tron/);
  t.regex(html, /USDT/);
  t.regex(html, /icon-tron\.svg/);
  t.regex(html, /icon-usdt\.svg/);

  const merchantBefore = await w.tokenBalance(w.tokens.usdt, w.merchant);
  const payer = w.payer();
  const paid = await payer.payTrc20(w.tokens.usdt, usdt.paymentAddress, 25_000_000n);
  await w.until(s.id, (x) => x.paymentIntent.status === 'processing', 'detection');
  await w.mine(DEPTH);
  const done = await w.until(s.id, (x) => x.status === 'complete', 'completion');
  t.is(done.paymentStatus, 'paid');
  t.is(done.amountReceived, '2500000000');
  t.is(done.transactionHash, txIdOf(paid.hash));

  const hooks = await w.receiver.waitFor((all) =>
    all.some((h) => h.body.includes('"checkout_session.completed"') && h.body.includes(s.id)),
  );
  for (const hook of hooks) t.is(hook.headers['x-webhook-signature'], bodySignature(w.endpointSecret, hook.body));
  const completed = JSON.parse(hooks.find((h) => h.body.includes('"checkout_session.completed"'))!.body) as {
    data: { object: TronSession };
  };
  t.is(completed.data.object.addresses.find((a) => a.asset.currency === 'usdt')!.paymentAddress, usdt.paymentAddress);
  // No 0x address anywhere in what the merchant is told, and the transaction by its txID, as Tronscan and TronWeb take it.
  t.notRegex(hooks.map((h) => h.body).join('\n'), /"0x[0-9a-fA-F]{40}"/);
  t.notRegex(hooks.map((h) => h.body).join('\n'), /"transactionHash":"0x/);
  t.is(done.paymentIntent.transactions[0]!.transactionHash, txIdOf(paid.hash));
  t.is(completed.data.object.paymentIntent.transactions[0]!.transactionHash, txIdOf(paid.hash));
  const found = await w
    .api()
    .get<{ data: { type: string; transactionHash: string; transactionUrl: string | null }[] }>(
      `/api/v1/transactions?transactionHash=${txIdOf(paid.hash)}`,
    );
  t.deepEqual(
    found.body.data.map((x) => [x.type, x.transactionHash]),
    [['incoming', txIdOf(paid.hash)]],
  );

  await w.until(s.id, (x) => x.sweeps.length === 1, 'the sweep');
  t.is((await w.tokenBalance(w.tokens.usdt, w.merchant)) - merchantBefore, 25_000_000n);
  t.is(await w.tokenBalance(w.tokens.usdt, usdt.paymentAddress), 0n);
  // Burnt for energy (the sweeper has none of its own; the free 600 bandwidth covers the bytes), in sun.
  const [sweep] = (await w.get(s.id)).sweeps;
  t.is(sweep!.tron?.energySource, 'burn');
  t.is(sweep!.tron?.energyUsed, sweep!.gasUsed);
  t.is(sweep!.tron?.trxBurnt, (BigInt(sweep!.gasUsed) * 210n).toString());
  t.is<string | undefined, string | undefined>(sweep!.gasCost, sweep!.tron?.trxBurnt);
  const listed = await w
    .api()
    .get<{ data: { type: string; trxBurnt?: string | null }[] }>(
      `/api/v1/transactions?checkoutSessionId=${s.id}&type=transfer`,
    );
  t.deepEqual(
    listed.body.data.map((x) => x.trxBurnt),
    [sweep!.tron?.trxBurnt],
  );
  // Swept by the Tron forwarder (balance-checked), the USDT having returned false.
  const forwarder = { address: tronToEvm(usdt.paymentAddress), abi: forwarderAbi } as const;
  t.true(await w.reader.readContract({ ...forwarder, functionName: 'checksBalanceChange' }));
});

test("a TRX payment is read from the block's transactions and completes the session", async (t) => {
  const w = await startTronWeir(t, { finalizedDepth: DEPTH });
  const s = await w.session('trx', '1000000000'); // 10 TRX
  const trx = s.addresses.find((a) => a.asset.currency === 'trx')!;
  t.is(trx.asset.address, 'native');
  const paid = await w.payer().payTrx(trx.paymentAddress, 10_000_000n);
  await w.mine(DEPTH);
  const done = await w.until(s.id, (x) => x.status === 'complete', 'completion');
  t.is(done.transactionHash, txIdOf(paid.hash));
  t.is(done.paymentIntent.transactions[0]!.amountRaw, '10000000');
});

test('a TRC-10 transfer to a TRX deposit address (java-tron shows its token amount as value) is no payment; a TRX transfer after it is', async (t) => {
  const w = await startTronWeir(t, { finalizedDepth: DEPTH });
  const s = await w.session('trx', '1000000000'); // 10 TRX
  const deposit = w.addressOf(s, 'trx');
  // Anyone can issue a TRC-10 token and send 10 "TRX" worth of its units to the deposit address.
  await w.payer().payTrc10(deposit, '1000001', 10_000_000n);
  const paid = await w.payer().payTrx(deposit, 4_000_000n);
  await w.mine(DEPTH);
  // The TRX transfer is in a later block: once it is credited, the follower has read the TRC-10 one.
  const partial = await w.until(
    s.id,
    (x) => x.paymentIntent.transactions.some((p) => p.status === 'confirmed'),
    'the TRX payment',
  );
  t.is(partial.status, 'incomplete');
  t.is(partial.amountReceived, '400000000');
  t.deepEqual(
    partial.paymentIntent.transactions.map((x) => [x.transactionHash, x.amountRaw]),
    [[txIdOf(paid.hash), '4000000']],
  );
});

test('partial then completing payment; an overpayment is recorded; a payment after expiry is recorded as late', async (t) => {
  const clock = createManualClock(Date.now());
  const w = await startTronWeir(t, { finalizedDepth: DEPTH, overrides: { clock } });
  const payer = w.payer();
  const s = await w.session('usdt', '1000000000'); // 10 USDT
  await payer.payTrc20(w.tokens.usdt, w.addressOf(s, 'usdt'), 4_000_000n);
  await w.mine(DEPTH);
  const partial = await w.until(s.id, (x) => x.status === 'incomplete', 'incomplete');
  t.is(partial.amountReceived, '400000000');
  await payer.payTrc20(w.tokens.usdt, w.addressOf(s, 'usdt'), 6_000_000n);
  await w.mine(DEPTH);
  t.is((await w.until(s.id, (x) => x.status === 'complete', 'complete')).amountReceived, '1000000000');

  const over = await w.session('usdt', '1000000000');
  await payer.payTrc20(w.tokens.usdt, w.addressOf(over, 'usdt'), 12_500_000n);
  await w.mine(DEPTH);
  t.is((await w.until(over.id, (x) => x.status === 'complete', 'complete')).amountOverpaid, '250000000');

  const late = await w.session('usdt', '100000000');
  clock.advanceBy(60 * 60 * 1000);
  await w.until(late.id, (x) => x.status === 'expired', 'expiry');
  await payer.payTrc20(w.tokens.usdt, w.addressOf(late, 'usdt'), 1_000_000n);
  await w.mine(DEPTH);
  const seen = await w.until(late.id, (x) => x.amountReceived === '100000000', 'the late payment');
  t.is(seen.status, 'expired');
  t.true(seen.paymentIntent.transactions[0]!.late);
  await w.receiver.waitFor((all) => all.some((h) => h.body.includes('"checkout_session.late_payment"')));
});

test('an empty eth_getLogs answer for the paying block is retried once the block is solidified, and the payment is credited once', async (t) => {
  const w = await startTronWeir(t, { finalizedDepth: DEPTH });
  const s = await w.session('usdt', '500000000'); // 5 USDT
  // The node "misses" the logs of the paying block once: the follower's own read gets [].
  const paid = await w.payUsdtUnlogged(s, 5_000_000n, 1);
  const block = paid.blockNumber;
  await w.mine(DEPTH + 1);
  const done = await w.until(s.id, (x) => x.status === 'complete', 'completion through the solidified re-read');
  t.is(done.transactionHash, txIdOf(paid.hash));
  t.is(done.paymentIntent.transactions.length, 1);
  const emptied = w.tron.proxy.emptiedAnswers();
  t.is(emptied.length, 1, 'the follower met the empty answer');
  t.true(emptied[0]!.requested.fromBlock <= block && block <= emptied[0]!.requested.toBlock);
  await w.mine(DEPTH);
  t.is((await w.get(s.id)).paymentIntent.transactions.length, 1);
});

test('a restart while the payment is being confirmed credits it once', async (t) => {
  const w = await startTronWeir(t, { finalizedDepth: DEPTH });
  const s = await w.session('usdt', '300000000'); // 3 USDT
  const paid = await w.payer().payTrc20(w.tokens.usdt, w.addressOf(s, 'usdt'), 3_000_000n);
  await w.until(s.id, (x) => x.paymentIntent.status === 'processing', 'detection');
  await w.restart();
  await w.mine(DEPTH + 1);
  const done = await w.until(s.id, (x) => x.status === 'complete', 'completion after the restart');
  t.is(done.transactionHash, txIdOf(paid.hash));
  t.is(done.paymentIntent.transactions.length, 1);
  t.is(done.amountReceived, '300000000');
  const hooks = await w.receiver.waitFor((all) =>
    all.some((h) => h.body.includes('"checkout_session.completed"') && h.body.includes(s.id)),
  );
  t.is(hooks.filter((h) => h.body.includes('"checkout_session.completed"') && h.body.includes(s.id)).length, 1);
});

test('a Tron wallet that fails its checksum, or a hex address, is a 400 naming the field', async (t) => {
  const w = await startTronWeir(t, { finalizedDepth: DEPTH });
  const mistyped = `${w.merchant.slice(0, -1)}${w.merchant.endsWith('a') ? 'b' : 'a'}`;
  const bad = await w
    .api()
    .post<{ error: { param?: string; message: string } }>('/api/v1/organization/withdrawal-addresses', {
      chainId: TRON_LOCAL_CHAIN_ID,
      address: mistyped,
      name: 'typo',
    });
  t.is(bad.status, 400, JSON.stringify(bad.body));
  t.regex(JSON.stringify(bad.body), /address/);
  t.regex(JSON.stringify(bad.body), /checksum/);
  const hex = await w.api().post('/api/v1/organization/withdrawal-addresses', {
    chainId: TRON_LOCAL_CHAIN_ID,
    address: '0x52908400098527886e0f7030069857d2e4169ee7',
    name: 'hex',
  });
  t.is(hex.status, 400);
  t.regex(JSON.stringify(hex.body), /address/);
});

test('logs the node never answers for the paying block: the reconciler credits the deposit balance once, as found by reconciliation, and it is swept', async (t) => {
  const w = await startTronWeir(t, { finalizedDepth: DEPTH, overrides: { tronReconcileIntervalMs: 200 } });
  const s = await w.session('usdt', '700000000'); // 7 USDT
  // Every eth_getLogs answer touching the paying block is [], the follower's and the solidified re-read's.
  await w.payUsdtUnlogged(s, 7_000_000n);
  await w.mine(DEPTH + 1);
  const done = await w.until(s.id, (x) => x.status === 'complete', 'completion through reconciliation');
  t.is(done.amountReceived, '700000000');
  t.is(done.paymentIntent.transactions.length, 1);
  t.regex(done.paymentIntent.transactions[0]!.transactionHash, /^reconciliation-[0-9a-f]{64}$/);
  t.true(w.tron.proxy.emptiedAnswers().length >= 2, 'the follower and the re-read both met the empty answer');
  await w.until(s.id, (x) => x.sweeps.length === 1, 'the sweep');
  t.is(await w.tokenBalance(w.tokens.usdt, w.addressOf(s, 'usdt')), 0n);
  // Passes after the sweep credit nothing more.
  await w.mine(DEPTH);
  t.is((await w.get(s.id)).paymentIntent.transactions.length, 1);
});

test('a partly paid session swept after its first payment is still reconciled: money the logs miss after the sweep is credited and completes it', async (t) => {
  const w = await startTronWeir(t, { finalizedDepth: DEPTH, overrides: { tronReconcileIntervalMs: 200 } });
  const s = await w.session('usdt', '1000000000'); // 10 USDT
  await w.payer().payTrc20(w.tokens.usdt, w.addressOf(s, 'usdt'), 4_000_000n);
  await w.mine(DEPTH);
  await w.until(s.id, (x) => x.status === 'incomplete' && x.sweeps.length === 1, 'the partial payment swept');
  t.is(await w.tokenBalance(w.tokens.usdt, w.addressOf(s, 'usdt')), 0n);
  // The rest arrives in a block whose logs the node never answers.
  await w.payUsdtUnlogged(s, 6_000_000n);
  await w.mine(DEPTH + 1);
  const done = await w.until(s.id, (x) => x.status === 'complete', 'completion through reconciliation');
  t.is(done.amountReceived, '1000000000');
  t.deepEqual(
    done.paymentIntent.transactions.map((x) => x.amountRaw),
    ['4000000', '6000000'],
  );
  t.regex(done.paymentIntent.transactions[1]!.transactionHash, /^reconciliation-[0-9a-f]{64}$/);
});
