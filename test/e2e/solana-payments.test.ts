import anyTest, { type TestFn } from 'ava';
import { SOLANA_LOCALNET_CHAIN_ID } from '../../src/chain-ingest/solana/networks.ts';
import { createManualClock } from '../../src/shared/clock.ts';
import { bodySignature } from '../../src/webhooks/signature.ts';
import { createUser } from '../../src/tenancy/create-user.ts';
import { apiClient } from '../support/api-client.ts';
import {
  chromiumPerFile,
  expectAccessible,
  newPage,
  recoverOnPage,
  screenshot,
  signIn,
  watchPage,
} from '../support/dashboard.ts';
import { startSolanaWeir, type SolanaSession } from '../support/solana-weir.ts';

/*
 * Solana Pay payments by reference on the local Solana (litesvm behind JSON-RPC) through NATS and
 * a real Weir: one chain and one Weir for the whole file, the scenarios one after another. The
 * chain reaches `confirmed` at once and `finalized` only when a scenario says so.
 */
type World = Awaited<ReturnType<typeof startSolanaWeir>>;
const test = anyTest as TestFn<{ w: World; clock: ReturnType<typeof createManualClock> }>;

test.before(async (t) => {
  const clock = createManualClock(Date.parse('2026-01-01T00:00:00Z'));
  t.context = { clock, w: await startSolanaWeir({ clock }) };
});
test.after.always((t) => t.context.w?.teardown());
const browser = chromiumPerFile(test as TestFn);

const usdcOf = (w: World) => w.chain.server.ledger.mints.usdc;
const usdtOf = (w: World) => w.chain.server.ledger.mints.usdt;
const finalize = (w: World) => w.chain.server.ledger.finalize();
const hooksOf = (w: World, type: string, id: string) =>
  w.receiver.received.filter((h) => h.body.includes(`"${type}"`) && h.body.includes(id));

test.serial(
  'USDC by reference: confirming at confirmed, complete at finalized, the signed webhook carries the signature',
  async (t) => {
    const { w } = t.context;
    const s = await w.session('usdc', '2500000000'); // 25 USDC
    const address = s.addresses.find((a) => a.asset.currency === 'usdc')!;
    t.is(address.asset.address, usdcOf(w));
    t.is(address.merchantAddress, w.merchant);
    // The hosted page's request to pay: a Solana Pay transfer request to the merchant's wallet with the reference, and its QR.
    const reveal = await apiClient(w.weir.url).post<{ address: string; paymentUri: string; qrSvg: string }>(
      `/checkout/${s.id}/payment-method`,
      { assetId: address.asset.id },
    );
    t.is(reveal.status, 200, JSON.stringify(reveal.body));
    t.is(reveal.body.address, w.merchant, 'the payer is shown the wallet the money goes to, not the reference');
    t.is(
      reveal.body.paymentUri,
      `solana:${w.merchant}?amount=25&spl-token=${usdcOf(w)}&reference=${w.referenceOf(s, 'usdc')}&label=Solana%20Shop&message=Thing`,
      'who asks (the organization) and for what (the items) in the wallet',
    );
    t.regex(reveal.body.qrSvg, /<svg/);
    const payer = await w.chain.newPayer();
    const signature = await payer.payToken(usdcOf(w), w.merchant, 25_000_000n, [w.referenceOf(s, 'usdc')]);
    const seen = await w.until(s.id, (x) => x.paymentIntent.transactions.length === 1, 'the payment seen at confirmed');
    t.is(seen.status, 'open');
    t.is(seen.paymentIntent.transactions[0]!.status, 'pending');
    t.is(seen.paymentIntent.transactions[0]!.transactionHash, signature, 'the signature, case kept');
    finalize(w);
    const done = await w.until(s.id, (x) => x.status === 'complete', 'completion at finalized');
    t.is(done.paymentStatus, 'paid');
    t.is(done.amountReceived, '2500000000');
    t.is(done.transactionHash, signature);
    await w.receiver.waitFor((all) =>
      all.some((h) => h.body.includes('"checkout_session.completed"') && h.body.includes(s.id)),
    );
    const completed = hooksOf(w, 'checkout_session.completed', s.id)[0]!;
    t.is(completed.headers['x-webhook-signature'], bodySignature(w.endpointSecret, completed.body));
    t.is((JSON.parse(completed.body) as { data: { object: SolanaSession } }).data.object.transactionHash, signature);
    const balance = await w.chain.rpc.getTokenAccountBalance(await w.chain.ata(w.merchant, usdcOf(w))).send();
    t.is(String(balance.value.amount), '25000000', 'the money is in the merchant wallet: nothing to sweep');
  },
);

test.serial('SOL by reference completes the session', async (t) => {
  const { w } = t.context;
  const s = await w.session('sol', '50000000'); // 0.5 SOL
  const payer = await w.chain.newPayer();
  const signature = await payer.paySol(w.merchant, 500_000_000n, [w.referenceOf(s, 'sol')]);
  const done = await w.seenThenFinalized(s.id, (x) => x.status === 'complete', 'completion');
  t.is(done.transactionHash, signature);
  t.is(done.paymentIntent.transactions[0]!.amountRaw, '500000000');
  // Recovery by signature answers the spec's outcome and credits nothing twice.
  const recovered = await w
    .api()
    .post<{ recovery?: { outcome: string }; amountReceived: string }>(
      '/api/v1/checkout/sessions/auto-recover-by-transaction-hash',
      { chainId: 1_399_811_148, transactionHash: signature },
    );
  t.is(recovered.status, 200, JSON.stringify(recovered.body));
  t.is(recovered.body.recovery?.outcome, 'complete');
  t.is((await w.get(s.id)).paymentIntent.transactions.length, 1);
});

test.serial(
  "the dashboard's recovery page offers the Solana network and looks a payment up by its signature",
  async (t) => {
    const { w } = t.context;
    const s = await w.session('usdc', '200000000'); // 2 USDC
    const payer = await w.chain.newPayer();
    const signature = await payer.payToken(usdcOf(w), w.merchant, 2_000_000n, [w.referenceOf(s, 'usdc')]);
    await w.seenThenFinalized(s.id, (x) => x.status === 'complete', 'completion');

    const owner = { email: 'owner@solana.example', password: 'correct horse battery staple' };
    await createUser(w.weir.commands, { organizationId: w.organizationId, ...owner, role: 'owner', actor: 'cli' });
    const page = await newPage(t, browser());
    const problems = await watchPage(page);
    await signIn(page, w.weir.url, owner);
    const outcome = await recoverOnPage(page, w.weir.url, SOLANA_LOCALNET_CHAIN_ID, signature);
    t.regex(outcome, /Complete Payment/);
    t.regex(outcome, new RegExp(s.id));
    await expectAccessible(t, page, 'recovery-solana');
    await screenshot(t, page, 'recovery-solana');
    t.is((await w.get(s.id)).paymentIntent.transactions.length, 1, 'credited once');
    t.deepEqual(problems(), [], 'no console error or CSP violation');
  },
);

test.serial('a partial payment, then one that completes it; an overpayment is recorded as such', async (t) => {
  const { w } = t.context;
  const s = await w.session('usdc', '1000000000'); // 10 USDC
  const payer = await w.chain.newPayer();
  const reference = w.referenceOf(s, 'usdc');
  await payer.payToken(usdcOf(w), w.merchant, 4_000_000n, [reference]);
  const partial = await w.seenThenFinalized(s.id, (x) => x.amountReceived === '400000000', 'partial');
  t.is(partial.status, 'incomplete');
  t.is(partial.paymentStatus, 'unpaid');
  await payer.payToken(usdcOf(w), w.merchant, 6_000_000n, [reference]);
  const done = await w.seenThenFinalized(s.id, (x) => x.status === 'complete', 'completion', 2);
  t.is(done.amountReceived, '1000000000');

  const over = await w.session('usdc', '100000000'); // 1 USDC
  await payer.payToken(usdcOf(w), w.merchant, 3_000_000n, [w.referenceOf(over, 'usdc')]);
  const overpaid = await w.seenThenFinalized(over.id, (x) => x.status === 'complete', 'completion');
  t.is(overpaid.amountOverpaid, '200000000');
});

test.serial('two sessions with equal amounts never cross: each reference credits its own session', async (t) => {
  const { w } = t.context;
  const a = await w.session('usdc', '700000000');
  const b = await w.session('usdc', '700000000');
  t.not(w.referenceOf(a, 'usdc'), w.referenceOf(b, 'usdc'));
  const payer = await w.chain.newPayer();
  const signature = await payer.payToken(usdcOf(w), w.merchant, 7_000_000n, [w.referenceOf(b, 'usdc')]);
  const done = await w.seenThenFinalized(b.id, (x) => x.status === 'complete', 'b completes');
  t.is(done.transactionHash, signature);
  // Both sessions' references are polled in the same rounds: a after b completed is still untouched.
  const other = await w.get(a.id);
  t.is(other.status, 'open');
  t.is(other.paymentIntent.transactions.length, 0);
});

test.serial('a payment in a mint the session does not take is not credited; recovery says wrong token', async (t) => {
  const { w } = t.context;
  const s = await w.session('usdc', '100000000');
  const payer = await w.chain.newPayer();
  const signature = await payer.payToken(usdtOf(w), w.merchant, 1_000_000n, [w.referenceOf(s, 'usdc')]);
  finalize(w);
  const recovered = await w
    .api()
    .post<{ code?: string; message?: string }>('/api/v1/checkout/sessions/auto-recover-by-transaction-hash', {
      chainId: 1_399_811_148,
      transactionHash: signature,
    });
  // The spec's "wrong token or network" outcome, answered as the EVM recovery answers it.
  t.is(recovered.status, 422, JSON.stringify(recovered.body));
  t.is(recovered.body.code, 'wrong_token_or_network');
  t.regex(recovered.body.message!, new RegExp(`paid in mint ${usdtOf(w)}, not mint ${usdcOf(w)}`));
  const after = await w.get(s.id);
  t.is(after.paymentIntent.transactions.length, 0);
  t.is(after.status, 'open');
});

test.serial('a transaction that stays at confirmed and is dropped is withdrawn', async (t) => {
  const { w } = t.context;
  const s = await w.session('usdc', '100000000');
  const payer = await w.chain.newPayer();
  const signature = await payer.payToken(usdcOf(w), w.merchant, 1_000_000n, [w.referenceOf(s, 'usdc')]);
  await w.until(s.id, (x) => x.paymentIntent.transactions.length === 1, 'seen at confirmed');
  w.chain.server.ledger.drop(signature);
  finalize(w);
  const withdrawn = await w.until(
    s.id,
    (x) => x.paymentIntent.status === 'requires_payment_method',
    'withdrawn once the cluster finalized past it',
  );
  t.is(withdrawn.status, 'open');
  t.deepEqual(withdrawn.paymentIntent.transactions, []);
  t.is(withdrawn.amountReceived, '0');
});

test.serial('killed between confirmed and finalized: completes once after the restart', async (t) => {
  const { w } = t.context;
  const s = await w.session('usdc', '200000000');
  const payer = await w.chain.newPayer();
  await payer.payToken(usdcOf(w), w.merchant, 2_000_000n, [w.referenceOf(s, 'usdc')]);
  await w.until(s.id, (x) => x.paymentIntent.transactions.length === 1, 'seen at confirmed');
  await w.restart(async () => finalize(w));
  const done = await w.until(s.id, (x) => x.status === 'complete', 'completion after the restart');
  t.is(done.paymentIntent.transactions.length, 1);
  await w.receiver.waitFor((all) =>
    all.some((h) => h.body.includes('"checkout_session.completed"') && h.body.includes(s.id)),
  );
  // A later session completing proves the webhook queue moved past: still one completion for s.
  const later = await w.session('usdc', '100000000');
  await payer.payToken(usdcOf(w), w.merchant, 1_000_000n, [w.referenceOf(later, 'usdc')]);
  await w.seenThenFinalized(later.id, (x) => x.status === 'complete', 'later completes');
  await w.receiver.waitFor((all) =>
    all.some((h) => h.body.includes('"checkout_session.completed"') && h.body.includes(later.id)),
  );
  t.is(hooksOf(w, 'checkout_session.completed', s.id).length, 1);
});

test.serial('a payment after expiry is recorded as late', async (t) => {
  const { w, clock } = t.context;
  const s = await w.session('usdc', '100000000');
  clock.advanceBy(25 * 60 * 60 * 1000);
  await w.until(s.id, (x) => x.status === 'expired', 'expiry');
  const payer = await w.chain.newPayer();
  await payer.payToken(usdcOf(w), w.merchant, 1_000_000n, [w.referenceOf(s, 'usdc')]);
  const late = await w.seenThenFinalized(s.id, (x) => x.amountReceived === '100000000', 'the late payment');
  t.is(late.status, 'expired');
  t.true(late.paymentIntent.transactions[0]!.late);
  await w.receiver.waitFor((all) =>
    all.some((h) => h.body.includes('"checkout_session.late_payment"') && h.body.includes(s.id)),
  );
  t.pass();
});

test.serial(
  'a payment made seconds before expiry whose notification the provider drops pays the session: the expiry waits for its reference to be read, not late money',
  async (t) => {
    const { w, clock } = t.context;
    const subscribed = w.chain.server.pubsub.subscriptions();
    const s = await w.session('usdc', '100000000');
    // Its reference subscribed: from here the follower leaves it to the socket (an idle read a minute).
    await w.until(s.id, () => w.chain.server.pubsub.subscriptions() > subscribed, 'the reference subscribed');
    w.chain.server.pubsub.dropNotifications(true);
    t.teardown(() => w.chain.server.pubsub.dropNotifications(false));
    clock.advanceTo(Date.parse(s.expiresAt) - 2_000);
    const payer = await w.chain.newPayer();
    await payer.payToken(usdcOf(w), w.merchant, 1_000_000n, [w.referenceOf(s, 'usdc')]);
    // Past the expiry and the socket's few seconds of slack, long before the minute's idle read.
    clock.advanceTo(Date.parse(s.expiresAt) + 10_000);
    const paid = await w.seenThenFinalized(s.id, (x) => x.status === 'complete', 'the payment made in time');
    t.false(paid.paymentIntent.transactions[0]!.late);
    t.is(hooksOf(w, 'checkout_session.expired', s.id).length, 0);
    w.chain.server.pubsub.dropNotifications(false);
  },
);
