import test, { type ExecutionContext } from 'ava';
import { encodeFunctionData, erc20Abi, getAddress, keccak256, toHex, type Address, type Hash } from 'viem';
import { testTokenAbi } from '../../src/chain-ingest/evm/contracts/abis.ts';
import { deployTestToken } from '../../src/chain-ingest/evm/contracts/deploy-contracts.ts';
import { encodeChainMessage } from '../../src/chain-ingest/chain-messages.ts';
import { apiClient, eventually, type ApiResponse } from '../support/api-client.ts';
import { devnetPayer, merchantWallet } from '../support/evm-devnet.ts';
import { startDevnetWeir } from '../support/devnet-weir.ts';
import { ADMIN_TOKEN, startTestWeir } from '../support/weir-harness.ts';

/**
 * Payment recovery by transaction hash against a real hardhat devnet and a real Weir. The payments
 * the follower "misses" are made while Weir runs without its EVM follower (`evmFollowers: false`,
 * as if the follower were down): nothing but the recovery endpoint can credit them.
 */

type Session = {
  id: string;
  status: string;
  paymentStatus: string;
  amountReceived: string;
  sweeps: unknown[];
  addresses: { network: string; asset: { currency: string }; paymentAddress: string }[];
  paymentIntent: { status: string; transactions: { transactionHash: string; status: string }[] };
  recovery?: { outcome: string; message: string };
};
type ErrorBody = { statusCode: number; error: string; message: string; code: string };
type Api = ReturnType<typeof apiClient>;

const BY_HASH = '/api/v1/checkout/sessions/auto-recover-by-transaction-hash';
const CHAIN = 31337;

async function recoveryWorld(
  t: ExecutionContext,
  options: { followers?: boolean; confirmations?: number; chainEnv?: Record<string, string> } = {},
) {
  // Anvil: a wrong claim is known only once the node's call trace shows no internal payment either (hardhat has no callTracer).
  const { devnet, receiver, weir, organization, restart } = await startDevnetWeir(t, {
    node: 'anvil',
    confirmations: options.confirmations,
    chainEnv: options.chainEnv,
    overrides: { evmFollowers: options.followers ?? false },
  });
  const merchant = (name: string) => organization(name);
  const session = async (api: Api, currency: string, unitAmount: string) => {
    const r = await api.post<Session>('/api/v1/checkout/sessions', {
      successUrl: 'https://shop.example/ok',
      lineItems: { data: [{ priceData: { currency, unitAmount, productData: { name: 'Thing' } }, quantity: 1 }] },
    });
    t.is(r.status, 200, JSON.stringify(r.body));
    return r.body;
  };
  const get = async (api: Api, id: string) => (await api.get<Session>(`/api/v1/checkout/sessions/${id}`)).body;
  const recover = <T = Session>(api: Api, transactionHash: string, chainId: unknown = CHAIN) =>
    api.post<T>(BY_HASH, { chainId, transactionHash });
  return {
    devnet,
    receiver,
    weir,
    restart,
    merchant,
    session,
    get,
    recover,
    payer: devnetPayer(devnet.info),
    usdc: devnet.info.contracts.usdc,
    dai: devnet.info.contracts.dai,
  };
}

const depositAddress = (s: Session) => getAddress(s.addresses[0]!.paymentAddress) as Address;
const hooksOfType = (received: { body: string }[], type: string) =>
  received.filter((h) => (JSON.parse(h.body) as { type: string }).type === type);

function assertError(t: ExecutionContext, r: ApiResponse<unknown>, status: number, code: string, message?: RegExp) {
  const body = r.body as ErrorBody;
  t.is(r.status, status, JSON.stringify(r.body));
  t.is(body.statusCode, status);
  t.is(body.code, code);
  if (message) t.regex(body.message, message);
}

test('recovery credits payments the follower missed: complete once final, in process before its confirmations and partial after; recovering again changes nothing', async (t) => {
  const w = await recoveryWorld(t, { confirmations: 3 });
  const shop = await w.merchant('Recovering Shop');
  const hooks = (
    await shop.api.post<{ id: string }>('/api/v1/webhook-endpoints', {
      description: 'shop',
      url: w.receiver.url,
      enabledEvents: { events: ['*'] },
    })
  ).body;
  t.truthy(hooks.id);
  const s = await w.session(shop.api, 'usdc', '2500000000'); // 25 USDC
  const paid = await w.payer.payToken(w.usdc, depositAddress(s), 25_000_000n);
  await w.devnet.mine(3);
  // No follower runs: the session does not know about the payment.
  t.is((await w.get(shop.api, s.id)).paymentIntent.transactions.length, 0);

  // The block has 4 blocks on it by now (the paying one and 3 mined): already final, recovery completes it at once.
  const first = await w.recover(shop.api, paid.hash);
  t.is(first.status, 200, JSON.stringify(first.body));
  t.is(first.body.recovery?.outcome, 'complete');
  t.is(first.body.id, s.id);
  t.is(first.body.status, 'complete');
  t.is(first.body.amountReceived, '2500000000');
  t.deepEqual(
    first.body.paymentIntent.transactions.map((x) => [x.transactionHash, x.status]),
    [[paid.hash, 'confirmed']],
  );

  await w.receiver.waitFor(
    (all) =>
      hooksOfType(all, 'checkout_session.completed').length > 0 &&
      hooksOfType(all, 'payment_intent.succeeded').length > 0,
  );
  const delivered = w.receiver.received.length;
  // Twice more (a new Idempotency-Key each time, so the work is really done again): nothing new.
  for (const key of ['again-1', 'again-2']) {
    const again = await shop.api.post<Session>(
      BY_HASH,
      { chainId: CHAIN, transactionHash: paid.hash },
      { 'idempotency-key': key },
    );
    t.is(again.status, 200);
    t.is(again.body.recovery?.outcome, 'complete');
    t.is(again.body.paymentIntent.transactions.length, 1);
  }
  const perSession = await shop.api.post<{ statusCode: number; message: string; outcome: string }>(
    `/api/v1/checkout/sessions/${s.id}/auto-recover`,
    { chainId: CHAIN, transactionHash: paid.hash },
  );
  t.is(perSession.status, 200, JSON.stringify(perSession.body));
  t.is(perSession.body.statusCode, 200);
  t.is(perSession.body.outcome, 'complete');
  t.regex(perSession.body.message, /complete/);
  await new Promise((resolve) => setTimeout(resolve, 500));
  t.is(w.receiver.received.length, delivered, 'no webhook for a recovery that changed nothing');
  t.is(hooksOfType(w.receiver.received, 'checkout_session.completed').length, 1);
  t.is(hooksOfType(w.receiver.received, 'payment_intent.succeeded').length, 1);

  // A second payment, recovered while its block is not final yet: in process, then complete once the confirmations are mined.
  const s2 = await w.session(shop.api, 'usdc', '1000000000'); // 10 USDC
  const partial = await w.payer.payToken(w.usdc, depositAddress(s2), 4_000_000n);
  const detected = await w.recover(shop.api, partial.hash);
  t.is(detected.status, 200, JSON.stringify(detected.body));
  t.is(detected.body.recovery?.outcome, 'in_process');
  t.regex(detected.body.recovery!.message, /3 blocks/);
  t.is(detected.body.paymentIntent.status, 'processing');
  t.deepEqual(
    detected.body.paymentIntent.transactions.map((x) => x.status),
    ['pending'],
  );
  await w.devnet.mine(2);
  const partly = await w.recover(shop.api, partial.hash);
  t.is(partly.body.recovery?.outcome, 'partial');
  t.is(partly.body.status, 'incomplete');
  t.is(partly.body.amountReceived, '400000000');
  t.deepEqual(
    partly.body.paymentIntent.transactions.map((x) => x.status),
    ['confirmed'],
  );
});

test('a final block whose final message went out a moment ago (for another transfer in it) does not leave a recovered payment pending', async (t) => {
  const w = await recoveryWorld(t, { confirmations: 3 });
  const shop = await w.merchant('Shared Block Shop');
  const s = await w.session(shop.api, 'usdc', '1500000000'); // 15 USDC
  const paid = await w.payer.payToken(w.usdc, depositAddress(s), 15_000_000n);
  await w.devnet.mine(3);
  // What the follower publishes when the block is final and held another watched transfer: the bus
  // drops a second message with its id for two minutes.
  const final = encodeChainMessage({
    type: 'final',
    network: s.addresses[0]!.network,
    chainId: CHAIN,
    blockNumber: Number(paid.blockNumber),
    blockHash: paid.blockHash,
    observedAt: new Date().toISOString(),
  });
  await w.weir.bus.publish(final.subject, final.data, { messageId: final.messageId });

  const recovered = await w.recover(shop.api, paid.hash);
  t.is(recovered.status, 200, JSON.stringify(recovered.body));
  t.is(recovered.body.recovery?.outcome, 'complete', JSON.stringify(recovered.body.recovery));
  t.is(recovered.body.status, 'complete');
  t.deepEqual(
    recovered.body.paymentIntent.transactions.map((x) => x.status),
    ['confirmed'],
  );
});

test('a payment recovered before its block is final is confirmed by the follower once final, with no second call, also across a restart; webhooks go out once', async (t) => {
  // The payments are made while Weir runs without its follower; the follower then starts after their blocks, so it never reads them.
  const w = await recoveryWorld(t, { confirmations: 5 });
  const shop = await w.merchant('Patient Shop');
  const endpoint = await shop.api.post<{ id: string }>('/api/v1/webhook-endpoints', {
    description: 'shop',
    url: w.receiver.url,
    enabledEvents: { events: ['*'] },
  });
  const a = await w.session(shop.api, 'usdc', '1000000000'); // 10 USDC
  const b = await w.session(shop.api, 'usdc', '500000000'); // 5 USDC
  const paidA = await w.payer.payToken(w.usdc, depositAddress(a), 10_000_000n);
  const paidB = await w.payer.payToken(w.usdc, depositAddress(b), 5_000_000n);
  await w.devnet.mine(1);
  const followed = await w.restart(w.weir, { evmFollowers: true });
  t.is(
    (await w.get(shop.api, a.id)).paymentIntent.transactions.length,
    0,
    'the follower started after the paying blocks',
  );

  // 3 and 2 blocks of 5: in process. Recovering A twice changes nothing.
  for (const key of ['first', 'again']) {
    const detected = await shop.api.post<Session>(
      BY_HASH,
      { chainId: CHAIN, transactionHash: paidA.hash },
      { 'idempotency-key': key },
    );
    t.is(detected.status, 200, JSON.stringify(detected.body));
    t.is(detected.body.recovery?.outcome, 'in_process');
    t.regex(
      detected.body.recovery!.message,
      /5 blocks\); the checkout session is updated then, with no further recovery/,
    );
    t.deepEqual(
      detected.body.paymentIntent.transactions.map((x) => [x.transactionHash, x.status]),
      [[paidA.hash, 'pending']],
    );
  }
  t.is((await w.recover(shop.api, paidB.hash)).body.recovery?.outcome, 'in_process');

  // A's block reaches 5 blocks: the follower publishes its final, and the session completes with no further call.
  await w.devnet.mine(2);
  const completeA = await eventually(async () => {
    const s = await w.get(shop.api, a.id);
    return s.status === 'complete' ? s : undefined;
  }, 'session A to complete once its block is final');
  t.is(completeA.amountReceived, '1000000000');
  t.deepEqual(
    completeA.paymentIntent.transactions.map((x) => x.status),
    ['confirmed'],
  );
  t.deepEqual(
    (await w.get(shop.api, b.id)).paymentIntent.transactions.map((x) => x.status),
    ['pending'],
    'B has 4 of 5 blocks',
  );

  // Weir is down while B's block gets its last confirmation: the follower's checkpoint still owes it a final.
  await followed.stop();
  await w.devnet.mine(1);
  const restarted = await w.restart(followed, { evmFollowers: true });
  const completeB = await eventually(async () => {
    const s = await w.get(shop.api, b.id);
    return s.status === 'complete' ? s : undefined;
  }, 'session B to complete after the restart');
  t.deepEqual(
    completeB.paymentIntent.transactions.map((x) => x.status),
    ['confirmed'],
  );

  // Generous: after two restarts on a loaded CI host the dispatcher's first round can take a while.
  await w.receiver.waitFor((all) => hooksOfType(all, 'checkout_session.completed').length === 2, 60_000);
  const again = await w.recover(shop.api, paidA.hash);
  t.is(again.body.recovery?.outcome, 'complete', 'recovering it once complete changes nothing');
  t.is(again.body.paymentIntent.transactions.length, 1);
  // Every delivery recorded as done, and every request the receiver had is one of those attempts.
  await eventually(async () => {
    const { data } = (
      await shop.api.get<{ data: { status: string; attempts: number }[] }>(
        `/api/v1/webhook-endpoints/${endpoint.body.id}/deliveries?limit=100`,
      )
    ).body;
    const done = data.every((d) => d.status === 'succeeded');
    return done && data.reduce((sum, d) => sum + d.attempts, 0) === w.receiver.received.length ? true : undefined;
  }, 'every delivery recorded, each request one of their attempts');
  const ids = w.receiver.received.map((hook) => (JSON.parse(hook.body) as { id: string }).id);
  t.is(new Set(ids).size, ids.length, 'each webhook event id is delivered once');
  t.is(hooksOfType(w.receiver.received, 'checkout_session.completed').length, 2);
  t.is(hooksOfType(w.receiver.received, 'payment_intent.succeeded').length, 2);
  const events = (await restarted.eventStore.readStream(`checkout_session-${a.id}`)).map((e) => e.type);
  t.deepEqual(
    events.filter((type) => type === 'PaymentDetected' || type === 'PaymentConfirmed'),
    ['PaymentDetected', 'PaymentConfirmed'],
  );
});

test("a transaction paying another organization's session is a wrong claim, answered exactly as an unrelated one, and touches nothing", async (t) => {
  const w = await recoveryWorld(t);
  const mine = await w.merchant('Shop A');
  const theirs = await w.merchant('Shop B');
  const ownSession = await w.session(mine.api, 'usdc', '100000000');
  const theirSession = await w.session(theirs.api, 'usdc', '100000000');
  const paysThem = await w.payer.payToken(w.usdc, depositAddress(theirSession), 1_000_000n);
  const unrelated = await w.payer.payToken(w.usdc, '0x000000000000000000000000000000000000dEaD', 1_000_000n);

  const claimed = await w.recover<ErrorBody>(mine.api, paysThem.hash);
  assertError(t, claimed, 404, 'wrong_claim', /^wrong claim: .* pays no checkout session of this organization/);
  const other = await w.recover<ErrorBody>(mine.api, unrelated.hash);
  assertError(t, other, 404, 'wrong_claim');
  t.is(
    claimed.body.message.replace(paysThem.hash, 'TX'),
    other.body.message.replace(unrelated.hash, 'TX'),
    'the same answer: nothing of the other organization shows',
  );
  t.false(JSON.stringify(claimed.body).includes(theirSession.id));
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.is(
    (await w.get(theirs.api, theirSession.id)).paymentIntent.transactions.length,
    0,
    "the other organization's session was not credited",
  );

  // Another tenant's session by id is a 404; the organization's own session with a transaction that pays another one is a wrong claim.
  assertError(
    t,
    await mine.api.post(`/api/v1/checkout/sessions/${theirSession.id}/auto-recover`, {
      chainId: CHAIN,
      transactionHash: paysThem.hash,
    }),
    404,
    'resource_missing',
  );
  assertError(
    t,
    await mine.api.post(`/api/v1/checkout/sessions/${ownSession.id}/auto-recover`, {
      chainId: CHAIN,
      transactionHash: paysThem.hash,
    }),
    404,
    'wrong_claim',
    /deposit address of checkout session/,
  );

  // The organization it does pay recovers it.
  const theirRecovery = await w.recover(theirs.api, paysThem.hash);
  t.is(theirRecovery.status, 200, JSON.stringify(theirRecovery.body));
  t.is(theirRecovery.body.recovery?.outcome, 'complete');
  t.is((await w.get(mine.api, ownSession.id)).paymentIntent.transactions.length, 0);
});

test('a token or coin the session does not accept is a wrong token or network (422) and credits nothing', async (t) => {
  const w = await recoveryWorld(t);
  const shop = await w.merchant('Picky Shop');
  const s = await w.session(shop.api, 'usdc', '100000000');
  // DAI is a token Weir knows on the devnet, but this session takes USDC only.
  const dai = await w.payer.payToken(w.dai, depositAddress(s), 10n ** 18n);
  assertError(
    t,
    await w.recover(shop.api, dai.hash),
    422,
    'wrong_token_or_network',
    new RegExp(`DAI on devnet, which checkout session ${s.id} does not accept`),
  );
  const eth = await w.payer.payNative(depositAddress(s), 10n ** 15n);
  assertError(t, await w.recover(shop.api, eth.hash), 422, 'wrong_token_or_network', /ETH on devnet/);
  // A token Weir does not know at all.
  const other = await deployTestToken(w.payer.clients, { name: 'Other Dollar', symbol: 'ODL', decimals: 6 });
  await w.payer.clients.publicClient.waitForTransactionReceipt({
    hash: await w.payer.clients.walletClient.writeContract({
      address: other.address,
      abi: testTokenAbi,
      functionName: 'mint',
      args: [w.payer.address, 10_000_000n],
    }),
  });
  const odl = await w.payer.payToken(other.address, depositAddress(s), 1_000_000n);
  assertError(
    t,
    await w.recover(shop.api, odl.hash),
    422,
    'wrong_token_or_network',
    new RegExp(`token ${other.address.toLowerCase()}, which Weir does not take on devnet`),
  );
  assertError(
    t,
    await shop.api.post(`/api/v1/checkout/sessions/${s.id}/auto-recover`, {
      chainId: CHAIN,
      transactionHash: dai.hash,
    }),
    422,
    'wrong_token_or_network',
  );
  const after = await w.get(shop.api, s.id);
  t.is(after.status, 'open');
  t.deepEqual(after.paymentIntent.transactions, []);
});

test('funds sent on the devnet to the deposit address a session has on another network are a wrong token or network (422) and credit nothing', async (t) => {
  // Base Sepolia is offered too (its endpoint is never contacted: no follower runs, and this recovery reads the devnet only).
  const BASE_SEPOLIA = 84_532;
  const w = await recoveryWorld(t, {
    chainEnv: {
      [`WEIR_RPC_${BASE_SEPOLIA}`]: 'http://127.0.0.1:9',
      [`WEIR_FACTORY_${BASE_SEPOLIA}`]: '0x00000000000000000000000000000000000fac70',
    },
  });
  const shop = await w.merchant('Two Chain Shop');
  t.is(
    (
      await shop.api.post('/api/v1/organization/withdrawal-addresses', {
        chainId: BASE_SEPOLIA,
        address: merchantWallet(w.devnet.info),
        name: 'base',
      })
    ).status,
    200,
  );
  const s = await w.session(shop.api, 'usdc', '100000000');
  const elsewhere = s.addresses.find((a) => a.network === 'base-sepolia');
  t.truthy(elsewhere, JSON.stringify(s.addresses));
  t.not(
    elsewhere!.paymentAddress.toLowerCase(),
    s.addresses.find((a) => a.network === 'devnet')?.paymentAddress.toLowerCase(),
    'another factory: another address',
  );
  const paid = await w.payer.payToken(w.usdc, getAddress(elsewhere!.paymentAddress), 1_000_000n);
  assertError(
    t,
    await w.recover(shop.api, paid.hash),
    422,
    'wrong_token_or_network',
    new RegExp(
      `^wrong token or network: .*funds on devnet to the deposit address checkout session ${s.id} has on base-sepolia`,
    ),
  );
  assertError(
    t,
    await shop.api.post(`/api/v1/checkout/sessions/${s.id}/auto-recover`, {
      chainId: CHAIN,
      transactionHash: paid.hash,
    }),
    422,
    'wrong_token_or_network',
    /has on base-sepolia/,
  );
  const after = await w.get(shop.api, s.id);
  t.is(after.status, 'open');
  t.deepEqual(after.paymentIntent.transactions, []);
});

test('bad input is a 400 naming the field; unknown, failed and other-environment transactions are refused', async (t) => {
  const w = await recoveryWorld(t);
  const shop = await w.merchant('Careful Shop');
  const hash = keccak256(toHex('no such transaction')) as Hash;
  assertError(
    t,
    await shop.api.post(BY_HASH, { transactionHash: hash }),
    400,
    'parameter_missing',
    /^chainId: is required/,
  );
  assertError(
    t,
    await w.recover(shop.api, hash, '31337'),
    400,
    'parameter_invalid_integer',
    /^chainId: must be an integer/,
  );
  assertError(t, await w.recover(shop.api, hash, 0), 400, 'parameter_invalid', /^chainId/);
  assertError(t, await shop.api.post(BY_HASH, { chainId: CHAIN }), 400, 'parameter_missing', /^transactionHash/);
  assertError(
    t,
    await w.recover(shop.api, '0x1234'),
    400,
    'parameter_invalid',
    /^transactionHash: must be a transaction hash/,
  );
  // A Tron transaction id's form (no 0x) passes the body's check; the EVM rail names the form it takes.
  assertError(
    t,
    await w.recover(shop.api, hash.slice(2)),
    400,
    'parameter_invalid',
    /^transactionHash: must be a transaction hash on devnet: 0x and 64 hex digits/,
  );
  assertError(t, await shop.api.post(BY_HASH, 'not json'), 400, 'invalid_json');
  assertError(
    t,
    await w.recover(shop.api, hash, 999_999),
    400,
    'chain_unsupported',
    /^chainId: no test network with chain id 999999/,
  );
  // Live keys see mainnets only: the devnet is not theirs.
  assertError(
    t,
    await w.recover(shop.live, hash),
    400,
    'chain_unsupported',
    /^chainId: no live network with chain id 31337/,
  );
  assertError(t, await w.recover(shop.api, hash), 404, 'transaction_not_found', /not found/);
  // A transfer of more USDC than the payer holds reverts: it moved nothing.
  const s = await w.session(shop.api, 'usdc', '100000000');
  // Signed here and sent raw: hardhat answers a reverting transaction with an error, though it mines it.
  const { walletClient, publicClient } = w.payer.clients;
  const signed = await walletClient.signTransaction(
    await walletClient.prepareTransactionRequest({
      to: w.usdc,
      data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [depositAddress(s), 10n ** 30n] }),
      gas: 120_000n,
    }),
  );
  await w.devnet.rpc('eth_sendRawTransaction', [signed]).catch(() => undefined);
  const reverted = await publicClient.waitForTransactionReceipt({ hash: keccak256(signed) });
  t.is(reverted.status, 'reverted');
  assertError(t, await w.recover(shop.api, reverted.transactionHash), 422, 'transaction_failed', /failed \(reverted\)/);
  assertError(
    t,
    await shop.api.post('/api/v1/checkout/sessions/cs_nope/auto-recover', { chainId: CHAIN, transactionHash: hash }),
    404,
    'resource_missing',
  );
});

test('with the follower running, recovering a payment it already delivered changes nothing', async (t) => {
  const w = await recoveryWorld(t, { followers: true });
  const shop = await w.merchant('Followed Shop');
  await shop.api.post('/api/v1/webhook-endpoints', {
    description: 'shop',
    url: w.receiver.url,
    enabledEvents: { events: ['*'] },
  });
  const s = await w.session(shop.api, 'usdc', '500000000');
  const paid = await w.payer.payToken(w.usdc, depositAddress(s), 5_000_000n);
  // Completed by the follower, and swept (the sweep is the session's last event).
  await eventually(
    async () => ((await w.get(shop.api, s.id)).sweeps.length === 1 ? true : undefined),
    'completion by the follower and the sweep',
  );
  await w.receiver.waitFor((all) => hooksOfType(all, 'checkout_session.completed').length === 1);
  const events = (await w.weir.eventStore.readStream(`checkout_session-${s.id}`)).map((e) => e.type);
  t.deepEqual(
    events.filter((type) => type === 'PaymentDetected' || type === 'PaymentConfirmed'),
    ['PaymentDetected', 'PaymentConfirmed'],
  );
  const recovered = await w.recover(shop.api, paid.hash);
  t.is(recovered.status, 200, JSON.stringify(recovered.body));
  t.is(recovered.body.recovery?.outcome, 'complete');
  t.is(recovered.body.paymentIntent.transactions.length, 1);
  await new Promise((resolve) => setTimeout(resolve, 500));
  t.deepEqual(
    (await w.weir.eventStore.readStream(`checkout_session-${s.id}`)).map((e) => e.type),
    events,
    'no new event on the session',
  );
  t.is(hooksOfType(w.receiver.received, 'checkout_session.completed').length, 1);
});

test('without EVM networks the recovery routes say there is no such network', async (t) => {
  const weir = await startTestWeir(t);
  const created = (
    await apiClient(weir.url, ADMIN_TOKEN).post<{ testSecretKey: string }>('/admin/organizations', {
      name: 'No chains',
    })
  ).body;
  const api = apiClient(weir.url, created.testSecretKey);
  const r = await api.post<ErrorBody>(BY_HASH, { chainId: 1, transactionHash: `0x${'ab'.repeat(32)}` });
  assertError(t, r, 400, 'chain_unsupported', /^chainId: no network with chain id 1: this Weir follows no EVM network/);
});
