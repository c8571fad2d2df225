import test, { type ExecutionContext } from 'ava';
import { encodeFunctionData, erc20Abi, getAddress, type Address } from 'viem';
import { bodySignature } from '../../src/webhooks/signature.ts';
import { apiClient, eventually } from '../support/api-client.ts';
import { testWeirClient, undeclaredBody } from '../support/weir-client.ts';
import { expectData } from '../../weir-client/src/index.ts';
import { devnetPayer, merchantWallet } from '../support/evm-devnet.ts';
import { startDevnetWeir } from '../support/devnet-weir.ts';
import { createManualClock, type ManualClock } from '../../src/shared/clock.ts';
import { createEvmWriteClients } from '../../src/chain-ingest/evm/contracts/clients.ts';
import { compileContracts } from '../../src/chain-ingest/evm/contracts/compile.ts';
import { devnetAccount, type DevnetInfo } from '../../src/chain-ingest/evm/devnet/devnet-info.ts';
import { SWEEPS, type SweepDoc } from '../../src/projections/sweeps.projection.ts';

type Session = {
  amountDetails: { amountGasFee: string; applyGasFee: boolean; amountTotal: string };
  amountGasFee: string;
  id: string;
  status: string;
  paymentStatus: string;
  amountTotal: string;
  amountReceived: string;
  amountOverpaid: string;
  transactionHash: string | null;
  addresses: {
    id: string;
    asset: { id: string; currency: string; address: string; decimals: number; chainId: number };
    paymentAddress: string;
    gas: string;
    gasAmount: string;
  }[];
  paymentIntent: {
    status: string;
    amountReceived: string;
    transactions: { transactionHash: string; amountRaw: string; status: string; late: boolean; blockNumber: number }[];
    paymentMethod: { accountAddress: string; amountDue: string } | null;
  };
  sweeps: { transactionHash: string; gasUsed: string; gasCost: string }[];
};

/** A devnet, NATS and a Weir offering the devnet, with a merchant whose wallet is the devnet's merchant account. */
async function evmWorld(
  t: ExecutionContext,
  options: {
    confirmations?: number;
    clock?: ManualClock;
    chainEnv?: Record<string, string>;
    sweepBatchDelayMs?: number;
  } = {},
) {
  const { devnet, nats, receiver, weir, organization } = await startDevnetWeir(t, {
    confirmations: options.confirmations,
    chainEnv: options.chainEnv,
    overrides: {
      sweepBatchDelayMs: options.sweepBatchDelayMs ?? 0,
      ...(options.clock ? { clock: options.clock } : {}),
    },
  });
  /** A new organization whose wallet on the devnet is `wallet`, with its test key's API and session helpers. */
  const shop = async (name: string, wallet: Address) => {
    const { testSecretKey, liveSecretKey } = await organization(name, wallet);
    // The merchant's calls go through weir-client, typed from the OpenAPI document.
    const api = testWeirClient(weir.url, testSecretKey);
    const session = async (currency: string, unitAmount: string) => {
      const r = await api.POST('/api/v1/checkout/sessions', {
        // `as never` until the route declares its body schema (then the request is typed too).
        body: {
          successUrl: 'https://shop.example/ok',
          lineItems: { data: [{ priceData: { currency, unitAmount, productData: { name: 'Thing' } }, quantity: 1 }] },
        } as never,
      });
      t.is(r.response.status, 200, JSON.stringify(r.error));
      return undeclaredBody<Session>(r);
    };
    const get = async (id: string) =>
      undeclaredBody<Session>(await api.GET('/api/v1/checkout/sessions/{id}', { params: { path: { id } } }));
    const until = (id: string, predicate: (s: Session) => boolean, what: string, timeoutMs = 30_000) =>
      eventually(
        async () => {
          const s = await get(id);
          return predicate(s) ? s : undefined;
        },
        what,
        timeoutMs,
      );
    return { api, session, get, until, liveKey: liveSecretKey };
  };
  const merchant = merchantWallet(devnet.info);
  const main = await shop('Devnet Shop', merchant);
  const endpoint = expectData(
    await main.api.POST('/api/v1/webhook-endpoints', {
      body: { description: 'shop', url: receiver.url, enabledEvents: { events: ['*'] } },
    }),
  );
  const payer = devnetPayer(devnet.info);
  return { devnet, nats, receiver, weir, merchant, endpoint, payer, shop, ...main };
}

const addressOf = (s: Session, currency: string) =>
  getAddress(s.addresses.find((a) => a.asset.currency === currency)!.paymentAddress) as Address;

test('a USDC payment on the devnet completes the session, the signed webhook arrives, and the sweep moves the money to the merchant wallet', async (t) => {
  const w = await evmWorld(t);
  const usdc = w.devnet.info.contracts.usdc;
  const s = await w.session('usdc', '2500000000'); // 25 USDC
  const usdcAddress = s.addresses.find((a) => a.asset.currency === 'usdc')!;
  t.is(getAddress(usdcAddress.asset.address), usdc);
  // The payer reveals the address (QR) on the hosted page: the intent gets the address and amount in chain units.
  const reveal = await apiClient(w.weir.url).post<{ amountDueRaw: string; address: string; paymentUri: string }>(
    `/checkout/${s.id}/payment-method`,
    { assetId: usdcAddress.asset.id },
  );
  t.is(reveal.body.amountDueRaw, '25000000');
  t.regex(
    reveal.body.paymentUri,
    /^ethereum:0x[0-9a-fA-F]{40}@31337\/transfer\?address=0x[0-9a-fA-F]{40}&uint256=25000000$/,
  );
  const intent = (await w.get(s.id)).paymentIntent.paymentMethod!;
  t.is(intent.accountAddress, usdcAddress.paymentAddress);
  t.is(intent.amountDue, '25000000');

  const merchantBefore = await w.payer.tokenBalance(usdc, w.merchant);
  const paid = await w.payer.payToken(usdc, addressOf(s, 'usdc'), 25_000_000n);
  const done = await w.until(s.id, (x) => x.status === 'complete', 'completion');
  t.is(done.paymentStatus, 'paid');
  t.is(done.amountReceived, '2500000000');
  t.is(done.transactionHash, paid.hash);
  t.is(done.paymentIntent.transactions[0]!.amountRaw, '25000000');

  const hooks = await w.receiver.waitFor(
    (all) =>
      all.some((h) => h.body.includes('"checkout_session.completed"')) &&
      all.some((h) => h.body.includes('"payment_intent.succeeded"')),
  );
  for (const hook of hooks) t.is(hook.headers['x-webhook-signature'], bodySignature(w.endpoint.secret, hook.body));
  const completed = JSON.parse(hooks.find((h) => h.body.includes('"checkout_session.completed"'))!.body) as {
    data: { object: Session };
  };
  t.is(completed.data.object.transactionHash, paid.hash);
  t.is(completed.data.object.amountReceived, '2500000000');

  const swept = await w.until(s.id, (x) => x.sweeps.length === 1, 'the sweep');
  t.true(BigInt(swept.sweeps[0]!.gasUsed) > 0n);
  t.true(BigInt(swept.sweeps[0]!.gasCost) > 0n);
  t.is((await w.payer.tokenBalance(usdc, w.merchant)) - merchantBefore, 25_000_000n);
  t.is(await w.payer.tokenBalance(usdc, addressOf(s, 'usdc')), 0n);
});

test('a native-coin payment completes an ETH session and is swept', async (t) => {
  const w = await evmWorld(t);
  const s = await w.session('eth', '10000000'); // 0.1 ETH
  const before = await w.payer.nativeBalance(w.merchant);
  const paid = await w.payer.payNative(addressOf(s, 'eth'), 100_000_000_000_000_000n);
  const done = await w.until(s.id, (x) => x.status === 'complete', 'completion');
  t.is(done.transactionHash, paid.hash);
  t.is(done.amountReceived, '10000000');
  await w.until(s.id, (x) => x.sweeps.length === 1, 'the sweep');
  t.is(
    (await w.payer.nativeBalance(w.merchant)) - before,
    100_000_000_000_000_000n,
    'the sweeper pays the gas, the merchant gets it all',
  );
});

test('partial then completing payment; overpayment recorded', async (t) => {
  const w = await evmWorld(t);
  const usdc = w.devnet.info.contracts.usdc;
  const s = await w.session('usdc', '1000000000'); // 10 USDC
  await w.payer.payToken(usdc, addressOf(s, 'usdc'), 4_000_000n);
  const partial = await w.until(s.id, (x) => x.status === 'incomplete', 'incomplete');
  t.is(partial.amountReceived, '400000000');
  await w.payer.payToken(usdc, addressOf(s, 'usdc'), 6_000_000n);
  const done = await w.until(s.id, (x) => x.status === 'complete', 'complete');
  t.is(done.amountReceived, '1000000000');

  const over = await w.session('usdc', '1000000000');
  await w.payer.payToken(usdc, addressOf(over, 'usdc'), 12_500_000n);
  const overpaid = await w.until(over.id, (x) => x.status === 'complete', 'complete');
  t.is(overpaid.amountOverpaid, '250000000');
});

test('a reorg that removes the paying block before confirmation leaves the session unpaid; a later real payment completes it', async (t) => {
  const w = await evmWorld(t, { confirmations: 4 });
  const usdc = w.devnet.info.contracts.usdc;
  const s = await w.session('usdc', '500000000');
  const snapshot = await w.devnet.rpc('evm_snapshot');
  await w.payer.payToken(usdc, addressOf(s, 'usdc'), 5_000_000n);
  await w.until(s.id, (x) => x.paymentIntent.status === 'processing', 'detection');
  // Replace the paying block (and what follows) by empty blocks at the same heights.
  await w.devnet.rpc('evm_revert', [snapshot]);
  await w.devnet.mine(6);
  const unwound = await w.until(
    s.id,
    (x) => x.paymentIntent.status === 'requires_payment_method',
    'the withdrawal after the reorg',
  );
  t.is(unwound.status, 'open');
  t.is(unwound.paymentStatus, 'unpaid');
  t.deepEqual(unwound.paymentIntent.transactions, []);

  const paid = await w.payer.payToken(usdc, addressOf(s, 'usdc'), 5_000_000n);
  await w.devnet.mine(4);
  const done = await w.until(s.id, (x) => x.status === 'complete', 'completion after the real payment');
  t.is(done.transactionHash, paid.hash);
  t.is(done.amountReceived, '500000000');
});

test('a block reorged away and then back (flip-back): the transfer withdrawn with it is credited once the block is final', async (t) => {
  const w = await evmWorld(t, { confirmations: 4 });
  const usdc = w.devnet.info.contracts.usdc;
  const s = await w.session('usdc', '500000000');
  const { walletClient, publicClient } = w.payer.clients;
  // The same signed transaction at the same timestamp on the same parent mines the very same block again.
  const request = await walletClient.prepareTransactionRequest({
    to: usdc,
    data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [addressOf(s, 'usdc'), 5_000_000n] }),
    gas: 120_000n,
  });
  const signed = await walletClient.signTransaction(request);
  const at = Number((await publicClient.getBlock()).timestamp) + 10;
  const mineIt = async () => {
    await w.devnet.rpc('evm_setNextBlockTimestamp', [at]);
    await w.devnet.rpc('eth_sendRawTransaction', [signed]);
    return publicClient.getBlock();
  };
  const parent = await w.devnet.rpc('evm_snapshot');
  const first = await mineIt();
  await w.until(s.id, (x) => x.paymentIntent.status === 'processing', 'detection');
  // Another branch, not final, takes the block's height: the transfer is withdrawn.
  await w.devnet.rpc('evm_revert', [parent]);
  const again = await w.devnet.rpc('evm_snapshot');
  await w.devnet.mine(2);
  // Withdrawn (the intent no longer shows it), and awaited back: the intent stays processing.
  const waiting = await w.until(s.id, (x) => x.paymentIntent.transactions.length === 0, 'the withdrawal');
  t.is(waiting.paymentIntent.status, 'processing');
  // The chain comes back to the very block and grows past finality on it.
  await w.devnet.rpc('evm_revert', [again]);
  const back = await mineIt();
  t.is(back.hash, first.hash, 'the same block again');
  await w.devnet.mine(4);
  const done = await w.until(s.id, (x) => x.status === 'complete', 'completion once the block is final');
  t.is(done.amountReceived, '500000000');
  t.deepEqual(
    done.paymentIntent.transactions.map((x) => x.status),
    ['confirmed'],
  );
});

/** A signed USDC transfer of `amount` to `to` that `mineAt` mines, in a block at the timestamp given, whenever called. */
async function signedTransfer(w: Awaited<ReturnType<typeof evmWorld>>, to: Address, amount: bigint) {
  const { walletClient, publicClient } = w.payer.clients;
  const request = await walletClient.prepareTransactionRequest({
    to: w.devnet.info.contracts.usdc,
    data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to, amount] }),
    gas: 120_000n,
  });
  const signed = await walletClient.signTransaction(request);
  const mineAt = async (timestamp: number) => {
    await w.devnet.rpc('evm_setNextBlockTimestamp', [timestamp]);
    await w.devnet.rpc('eth_sendRawTransaction', [signed]);
    return publicClient.getBlock();
  };
  return { mineAt, at: Number((await publicClient.getBlock()).timestamp) + 10 };
}

test('a payment detected before expiresAt, reorged away after it and mined again in another block, completes the session on time: never expired, not late', async (t) => {
  const clock = createManualClock(Date.now());
  const w = await evmWorld(t, { confirmations: 4, clock });
  const s = await w.session('usdc', '500000000');
  const payment = await signedTransfer(w, addressOf(s, 'usdc'), 5_000_000n);
  const parent = await w.devnet.rpc('evm_snapshot');
  const first = await payment.mineAt(payment.at);
  await w.until(s.id, (x) => x.paymentIntent.status === 'processing', 'detection');
  clock.advanceBy(61 * 60 * 1000);
  // Past expiresAt the block is reorged away; the transaction, back in the mempool, is mined in another block.
  await w.devnet.rpc('evm_revert', [parent]);
  const again = await payment.mineAt(payment.at + 1);
  t.not(again.hash, first.hash);
  await w.devnet.mine(4);
  const done = await w.until(s.id, (x) => x.status !== 'open', 'the session to end');
  t.like(done, { status: 'complete', paymentStatus: 'paid', amountReceived: '500000000' });
  t.is((done as Session & { expiredAt: string | null }).expiredAt, null);
  t.deepEqual(
    done.paymentIntent.transactions.map((x) => [x.status, x.late]),
    [['confirmed', false]],
  );
  await w.receiver.waitFor((all) => all.some((h) => h.body.includes('"checkout_session.completed"')));
  t.false(w.receiver.received.some((h) => h.body.includes('"checkout_session.expired"')));
});

test('a payment detected before expiresAt and reorged away after it, never mined again: the session expires once its height is final without it', async (t) => {
  const clock = createManualClock(Date.now());
  const w = await evmWorld(t, { confirmations: 4, clock });
  const s = await w.session('usdc', '500000000');
  const parent = await w.devnet.rpc('evm_snapshot');
  await w.payer.payToken(w.devnet.info.contracts.usdc, addressOf(s, 'usdc'), 5_000_000n);
  await w.until(s.id, (x) => x.paymentIntent.status === 'processing', 'detection');
  clock.advanceBy(61 * 60 * 1000);
  // Past expiresAt, another branch without it takes the block's height, then grows past finality.
  await w.devnet.rpc('evm_revert', [parent]);
  await w.devnet.mine(2);
  const waiting = await w.until(s.id, (x) => x.paymentIntent.transactions.length === 0, 'the withdrawal');
  t.is(waiting.status, 'open', 'the transaction may still be mined again');
  t.is(waiting.paymentIntent.status, 'processing', 'the payer is told not to pay again');
  await w.devnet.mine(4);
  const expired = await w.until(s.id, (x) => x.status === 'expired', 'the expiry once the height is final');
  t.is(expired.paymentIntent.status, 'canceled');
  t.deepEqual(expired.paymentIntent.transactions, []);
});

test('a reorg A→B→A, the transfer mined again in chain B one block higher: once chain A is back and final, the transfer counts once', async (t) => {
  const w = await evmWorld(t, { confirmations: 4 });
  const s = await w.session('usdc', '500000000');
  const payment = await signedTransfer(w, addressOf(s, 'usdc'), 5_000_000n);
  const parent = await w.devnet.rpc('evm_snapshot');
  const inA = await payment.mineAt(payment.at);
  await w.until(s.id, (x) => x.paymentIntent.status === 'processing', 'detection in chain A');
  // Chain B: an empty block at A's height, then the transaction again.
  await w.devnet.rpc('evm_revert', [parent]);
  const back = await w.devnet.rpc('evm_snapshot');
  // Its empty block at a set time too: mined at the wall clock, it could pass `at + 5` on a slow host.
  await w.devnet.rpc('evm_setNextBlockTimestamp', [payment.at + 1]);
  await w.devnet.mine(1);
  const inB = await payment.mineAt(payment.at + 5);
  t.is(inB.number, inA.number + 1n);
  await w.until(
    s.id,
    (x) => x.paymentIntent.transactions[0]?.blockNumber === Number(inB.number),
    'detection in chain B',
  );
  // Chain A comes back, its block the very same, and grows past finality.
  await w.devnet.rpc('evm_revert', [back]);
  t.is((await payment.mineAt(payment.at)).hash, inA.hash, 'the same block again');
  await w.devnet.mine(4);
  const done = await w.until(s.id, (x) => x.status === 'complete', 'completion once chain A is final');
  t.like(done, { amountReceived: '500000000', amountOverpaid: '0' });
  t.deepEqual(
    done.paymentIntent.transactions.map((x) => [x.status, x.blockNumber]),
    [['confirmed', Number(inA.number)]],
  );
});

test('a payment after expiry is recorded, not lost, reported by a webhook, and swept', async (t) => {
  const clock = createManualClock(Date.now());
  const w = await evmWorld(t, { clock });
  const usdc = w.devnet.info.contracts.usdc;
  const s = await w.session('usdc', '100000000');
  clock.advanceBy(60 * 60 * 1000);
  await w.until(s.id, (x) => x.status === 'expired', 'expiry');
  await w.payer.payToken(usdc, addressOf(s, 'usdc'), 1_000_000n);
  const late = await w.until(s.id, (x) => x.amountReceived === '100000000', 'the late payment');
  t.is(late.status, 'expired');
  t.is(late.paymentStatus, 'unpaid');
  t.true(late.paymentIntent.transactions[0]!.late);
  // Weir's clock stands still since the expiry: a step retried on a loaded host (its retry due on that
  // clock) would wait for ever, so it moves a second at a time while the webhook is awaited, as a real one would.
  const moving = setInterval(() => clock.advanceBy(1000), 200);
  const hook = await w.receiver
    .waitFor((all) => all.some((h) => h.body.includes('"checkout_session.late_payment"')))
    .finally(() => clearInterval(moving));
  t.truthy(hook);
  const before = await w.payer.tokenBalance(usdc, w.merchant);
  clock.advanceBy(1000);
  await w.until(s.id, (x) => x.sweeps.length === 1, 'late money is swept to the merchant too');
  t.is((await w.payer.tokenBalance(usdc, w.merchant)) - before, 1_000_000n);
});

test('the faucet sends test tokens to test keys and refuses live keys', async (t) => {
  const w = await evmWorld(t);
  const target = '0x000000000000000000000000000000000000f00d';
  const r = await w.api.POST('/api/v1/faucet', {
    body: { address: target, asset: 'usdc', amount: '1500000000' } as never,
  });
  t.is(r.response.status, 200, JSON.stringify(r.error));
  t.is(undeclaredBody<{ transactionHash: string; amountRaw: string }>(r).amountRaw, '15000000');
  t.is(await w.payer.tokenBalance(w.devnet.info.contracts.usdc, target), 15_000_000n);
  const live = await testWeirClient(w.weir.url, w.liveKey).POST('/api/v1/faucet', {
    body: { address: target } as never,
  });
  t.is(live.response.status, 403);
  const bad = await w.api.POST('/api/v1/faucet', { body: { address: 'nope' } as never });
  t.is(bad.response.status, 400);
  t.regex(bad.error?.message ?? '', /^address/);
});

test("chains and assets are served for the key's environment", async (t) => {
  const w = await evmWorld(t);
  const chains = undeclaredBody<{ data: { id: number; assets: { symbol: string }[] }[] }>(
    await w.api.GET('/api/v1/chains'),
  ).data;
  t.deepEqual(
    chains.map((c) => c.id),
    [31337],
  );
  t.deepEqual(chains[0]!.assets.map((a) => a.symbol).sort(), ['DAI', 'ETH', 'USDC', 'USDT']);
  const live = undeclaredBody<{ data: unknown[] }>(
    await testWeirClient(w.weir.url, w.liveKey).GET('/api/v1/chains'),
  ).data;
  t.deepEqual(live, []);
});

test('with gas collection on, the estimated sweep gas is added to the amount due as amountGasFee', async (t) => {
  // Weir's clock stands still: the gas price it read stays cached for both sessions, however slow the run.
  const w = await evmWorld(t, {
    chainEnv: { WEIR_NATIVE_PRICE_31337_USDC: '2000' },
    clock: createManualClock(Date.now()),
  });
  const setting = await w.api.PUT('/api/v1/organization/payment-setting', { body: { applyGasFee: true } as never });
  t.is(setting.response.status, 200);
  const s = await w.session('eth', '10000000'); // 0.1 ETH
  const eth = s.addresses.find((a) => a.asset.currency === 'eth')!;
  t.is(eth.gas, '160000');
  const gasAmount = BigInt(eth.gasAmount);
  t.true(gasAmount > 0n, 'gas priced from the node');
  const reveal = await apiClient(w.weir.url).post<{ amountDueRaw: string }>(`/checkout/${s.id}/payment-method`, {
    assetId: eth.asset.id,
  });
  t.is(BigInt(reveal.body.amountDueRaw), (10_000_000n + gasAmount) * 10n ** 10n);
  const chosen = await w.get(s.id);
  t.is(chosen.amountDetails.amountGasFee, eth.gasAmount);
  t.true(chosen.amountDetails.applyGasFee);
  t.is(chosen.amountTotal, (10_000_000n + gasAmount).toString());
  await w.payer.payNative(addressOf(s, 'eth'), 100_000_000_000_000_000n);
  await w.until(s.id, (x) => x.status === 'incomplete', 'goods paid, gas still due');
  await w.payer.payNative(addressOf(s, 'eth'), gasAmount * 10n ** 10n);
  const done = await w.until(s.id, (x) => x.status === 'complete', 'complete with the gas fee');
  t.is(done.amountReceived, (10_000_000n + gasAmount).toString());

  // A USDC session prices the gas with the operator's ETH price (2000 USDC per ETH).
  const u = await w.session('usdc', '100000000');
  const usdc = u.addresses.find((a) => a.asset.currency === 'usdc')!;
  // The same cached gas price: ETH's fee is rounded up to 10^-8 ETH, USDC's to its own unit, 10^-6 USDC
  // (so the total is payable exactly in USDC).
  t.true(
    BigInt(usdc.gasAmount) <= gasAmount * 2000n && BigInt(usdc.gasAmount) > (gasAmount - 1n) * 2000n,
    `${usdc.gasAmount} vs ${gasAmount} ETH units`,
  );
  t.is(BigInt(usdc.gasAmount) % 100n, 0n, `${usdc.gasAmount} is whole 10^-6 USDC`);
});

/** A merchant "wallet" that is a contract refusing the native coin: every transfer of ETH to it reverts. */
const nativeCoinRefusingWalletSource = `// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

contract NativeCoinRefusingWallet {
    error NativeCoinRefused();

    receive() external payable {
        revert NativeCoinRefused();
    }
}
`;

/** Compiles it with the pinned solc (as artifacts.test.ts does) and deploys it from the devnet's deployer. */
async function deployNativeCoinRefusingWallet(info: DevnetInfo): Promise<Address> {
  const artifact = compileContracts({ 'test/NativeCoinRefusingWallet.sol': nativeCoinRefusingWalletSource })[
    'NativeCoinRefusingWallet'
  ]!;
  const deployer = createEvmWriteClients({
    rpcUrl: info.rpcUrl,
    chainId: info.chainId,
    privateKey: devnetAccount(info, 'deployer').privateKey,
  });
  const hash = await deployer.walletClient.deployContract({ abi: artifact.abi, bytecode: artifact.bytecode });
  const receipt = await deployer.publicClient.waitForTransactionReceipt({ hash });
  return getAddress(receipt.contractAddress!);
}

test('a merchant wallet that refuses the native coin does not hold back the rest of its sweep batch: the other deposits are swept on chain', async (t) => {
  const clock = createManualClock(Date.now());
  // Confirmed payments wait a minute of the manual clock, so the three go into one batch.
  const w = await evmWorld(t, { clock, sweepBatchDelayMs: 60_000 });
  const refusingWallet = await deployNativeCoinRefusingWallet(w.devnet.info);
  const refusingShop = await w.shop('Contract Wallet Shop', refusingWallet);
  const usdc = w.devnet.info.contracts.usdc;
  const eth = await w.session('eth', '10000000'); // 0.1 ETH
  const refused = await refusingShop.session('eth', '10000000');
  const usd = await w.session('usdc', '2500000000'); // 25 USDC
  const before = { eth: await w.payer.nativeBalance(w.merchant), usdc: await w.payer.tokenBalance(usdc, w.merchant) };
  await w.payer.payNative(addressOf(eth, 'eth'), 100_000_000_000_000_000n);
  await w.payer.payNative(addressOf(refused, 'eth'), 100_000_000_000_000_000n);
  await w.payer.payToken(usdc, addressOf(usd, 'usdc'), 25_000_000n);
  const sweeps = w.weir.readStore.collection<SweepDoc>(SWEEPS);
  await eventually(
    async () => ((await sweeps.find({ pending: true })).length === 3 ? true : undefined),
    'three confirmed deposits waiting to be swept',
    30_000,
  );

  clock.advanceBy(60_000);
  const swept = [
    await w.until(eth.id, (x) => x.sweeps.length === 1, 'the ETH sweep'),
    await w.until(usd.id, (x) => x.sweeps.length === 1, 'the USDC sweep'),
  ];
  t.is((await w.payer.nativeBalance(w.merchant)) - before.eth, 100_000_000_000_000_000n);
  t.is((await w.payer.tokenBalance(usdc, w.merchant)) - before.usdc, 25_000_000n);
  // Each transaction sent is recorded with its own gas, split exactly over the sessions it swept.
  const records = swept.map((s) => s.sweeps[0]!);
  for (const hash of new Set(records.map((r) => r.transactionHash))) {
    const sent = records.filter((r) => r.transactionHash === hash);
    const receipt = await w.payer.clients.publicClient.getTransactionReceipt({ hash: hash as `0x${string}` });
    t.is(receipt.status, 'success');
    t.is(
      sent.reduce((sum, r) => sum + BigInt(r.gasUsed), 0n),
      receipt.gasUsed,
    );
    t.is(
      sent.reduce((sum, r) => sum + BigInt(r.gasCost), 0n),
      receipt.gasUsed * receipt.effectiveGasPrice,
    );
  }
  // The refusing wallet's deposit stays where it is, waiting for its own retry; nothing was lost.
  t.deepEqual((await refusingShop.get(refused.id)).sweeps, []);
  t.is(await w.payer.nativeBalance(addressOf(refused, 'eth')), 100_000_000_000_000_000n);
  t.is(await w.payer.nativeBalance(refusingWallet), 0n);
  t.deepEqual(
    (await sweeps.find({ pending: true })).map((d) => d.checkoutSessionId),
    [refused.id],
  );
});
