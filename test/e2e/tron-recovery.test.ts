import test, { type ExecutionContext } from 'ava';
import { tronAddressProblem } from '../../src/chain-ingest/tron/address.ts';
import { TRON_LOCAL_CHAIN_ID } from '../../src/chain-ingest/tron/networks.ts';
import { eventually, type ApiResponse } from '../support/api-client.ts';
import { startTronWeir, txIdOf, type TronSession } from '../support/tron-weir.ts';

/*
 * Recovery by transaction id on the local Tron (anvil behind the Tron-flavoured proxy, finalized
 * 3 blocks behind the head). A USDT payment the follower misses because the node's eth_getLogs
 * answers [] for its block (the proxy's `weir_emptyLogs`, as Tron nodes are known to do), and a
 * TRX payment made while no Tron follower runs (TRX is read from block transactions, which the
 * proxy does not hide): only a recovery by the transaction's id credits them, once.
 */

const DEPTH = 3;
const BY_ID = '/api/v1/checkout/sessions/auto-recover-by-transaction-hash';

type Recovered = TronSession & { recovery?: { outcome: string; message: string } };
type ErrorBody = { statusCode: number; code: string; message: string };
type World = Awaited<ReturnType<typeof startTronWeir>>;

const recover = (w: World, transactionHash: string) =>
  w.api().post<Recovered>(BY_ID, { chainId: TRON_LOCAL_CHAIN_ID, transactionHash });
const eventTypes = async (w: World, id: string) =>
  (await w.weir.eventStore.readStream(`checkout_session-${id}`)).map((e) => e.type);
const hooksFor = (w: World, type: string, id: string) =>
  w.receiver.received.filter((h) => h.body.includes(`"${type}"`) && h.body.includes(id));

function assertError(t: ExecutionContext, r: ApiResponse<unknown>, status: number, code: string, message: RegExp) {
  const body = r.body as ErrorBody;
  t.is(r.status, status, JSON.stringify(r.body));
  t.is(body.code, code);
  t.regex(body.message, message);
}

test('a USDT payment whose logs the node never answers is recovered by its Tron id: in process, confirmed by the follower, complete; recovering again changes nothing', async (t) => {
  const w = await startTronWeir(t, { finalizedDepth: DEPTH });
  const s = await w.session('usdt', '2500000000'); // 25 USDT
  const paid = await w.payUsdtUnlogged(s, 25_000_000n);
  await eventually(
    async () => (w.tron.proxy.emptiedAnswers().length > 0 ? true : undefined),
    'the follower meeting the empty answer',
  );
  t.is((await w.get(s.id)).paymentIntent.transactions.length, 0, 'the follower missed it');

  // Tron's own form: 64 hex digits without 0x. Its block is not solidified yet: the follower takes it.
  const detected = await recover(w, paid.hash.slice(2));
  t.is(detected.status, 200, JSON.stringify(detected.body));
  t.is(detected.body.recovery?.outcome, 'in_process');
  t.regex(
    detected.body.recovery!.message,
    /3 blocks\); the checkout session is updated then, with no further recovery/,
  );
  t.is(detected.body.id, s.id);
  t.deepEqual(
    detected.body.paymentIntent.transactions.map((x) => [x.transactionHash, x.status, x.amountRaw]),
    [[txIdOf(paid.hash), 'pending', '25000000']],
  );
  const from = detected.body.paymentIntent.transactions[0]!.fromAddress ?? '';
  t.is(tronAddressProblem(from), null, `the payer in T… form: ${from}`);

  await w.mine(DEPTH + 1);
  const done = await w.until(
    s.id,
    (x) => x.status === 'complete',
    'completion by the follower, with no second recovery',
  );
  t.is(done.amountReceived, '2500000000');
  t.is(done.transactionHash, txIdOf(paid.hash));
  await w.receiver.waitFor(() => hooksFor(w, 'checkout_session.completed', s.id).length > 0);
  // Swept like any payment (the sweep is the session's last event).
  await w.until(s.id, (x) => x.sweeps.length === 1, 'the sweep');
  const events = await eventTypes(w, s.id);
  t.deepEqual(
    events.filter((type) => type === 'PaymentDetected' || type === 'PaymentConfirmed'),
    ['PaymentDetected', 'PaymentConfirmed'],
  );

  // Again, in both forms and per session: the same transfer id, so nothing new is recorded.
  for (const id of [paid.hash, paid.hash.slice(2).toUpperCase()]) {
    const again = await recover(w, id);
    t.is(again.status, 200, JSON.stringify(again.body));
    t.is(again.body.recovery?.outcome, 'complete');
    t.is(again.body.paymentIntent.transactions.length, 1);
  }
  const perSession = await w.api().post<{ outcome: string }>(`/api/v1/checkout/sessions/${s.id}/auto-recover`, {
    chainId: TRON_LOCAL_CHAIN_ID,
    transactionHash: paid.hash.slice(2),
  });
  t.is(perSession.status, 200, JSON.stringify(perSession.body));
  t.is(perSession.body.outcome, 'complete');
  t.deepEqual(await eventTypes(w, s.id), events, 'no new event on the session');
  t.is(hooksFor(w, 'checkout_session.completed', s.id).length, 1);
  // No 0x address anywhere in what the merchant is told.
  t.notRegex(w.receiver.received.map((h) => h.body).join('\n'), /"0x[0-9a-fA-F]{40}"/);
});

test('a TRX payment made while no Tron follower runs is recovered by its Tron id and credited once (a TRC-10 transfer to the same address is not); a malformed id is a 400, an unknown one a 404', async (t) => {
  const w = await startTronWeir(t, { finalizedDepth: DEPTH, overrides: { tronFollowers: false } });
  const s = await w.session('trx', '1000000000'); // 10 TRX
  // A TRC-10 transfer of 10 units first: java-tron shows its token amount as the transaction's value, yet it is no TRX.
  const trc10 = await w.payer().payTrc10(w.addressOf(s, 'trx'), '1000001', 10_000_000n);
  const paid = await w.payer().payTrx(w.addressOf(s, 'trx'), 10_000_000n);
  await w.mine(DEPTH);
  t.is((await w.get(s.id)).paymentIntent.transactions.length, 0, 'nothing follows the chain');
  assertError(t, await recover(w, trc10.slice(2)), 422, 'wrong_token_or_network', /a TRC-10 token/);
  t.is((await w.get(s.id)).paymentIntent.transactions.length, 0, 'the TRC-10 transfer is not credited');

  const recovered = await recover(w, paid.hash.slice(2));
  t.is(recovered.status, 200, JSON.stringify(recovered.body));
  t.is(recovered.body.recovery?.outcome, 'complete');
  t.is(recovered.body.status, 'complete');
  t.is(recovered.body.amountReceived, '1000000000');
  t.deepEqual(
    recovered.body.paymentIntent.transactions.map((x) => [x.transactionHash, x.status, x.amountRaw]),
    [[txIdOf(paid.hash), 'confirmed', '10000000']],
  );
  await w.receiver.waitFor(() => hooksFor(w, 'checkout_session.completed', s.id).length > 0);
  await w.until(s.id, (x) => x.sweeps.length === 1, 'the sweep');
  const events = await eventTypes(w, s.id);

  const again = await recover(w, paid.hash);
  t.is(again.status, 200, JSON.stringify(again.body));
  t.is(again.body.recovery?.outcome, 'complete');
  t.is(again.body.paymentIntent.transactions.length, 1);
  t.deepEqual(await eventTypes(w, s.id), events, 'no new event on the session');
  t.is(hooksFor(w, 'checkout_session.completed', s.id).length, 1);

  assertError(t, await recover(w, '0x1234'), 400, 'parameter_invalid', /^transactionHash: must be a transaction hash/);
  // A Solana signature's form passes the body's check; the Tron rail names what it takes.
  assertError(
    t,
    await recover(w, 'z'.repeat(64)),
    400,
    'parameter_invalid',
    /^transactionHash: must be a Tron transaction id on tron-local: 64 hex digits, with or without 0x/,
  );
  assertError(t, await recover(w, '12'.repeat(32)), 404, 'transaction_not_found', /not found/);
});

test('a USDT payment the reconciler credited from the deposit balance, recovered later by its id, is not counted twice', async (t) => {
  const w = await startTronWeir(t, { finalizedDepth: DEPTH, overrides: { tronReconcileIntervalMs: 200 } });
  const s = await w.session('usdt', '700000000'); // 7 USDT
  const paid = await w.payUsdtUnlogged(s, 7_000_000n);
  await w.mine(DEPTH + 1);
  const reconciled = await w.until(s.id, (x) => x.status === 'complete', 'completion through reconciliation');
  t.regex(reconciled.paymentIntent.transactions[0]!.transactionHash, /^reconciliation-[0-9a-f]{64}$/);
  await w.until(s.id, (x) => x.sweeps.length === 1, 'the sweep');

  // The real transfer is recorded against the reconciliation credit; the answer is the session's outcome.
  const recovered = await recover(w, paid.hash.slice(2));
  t.is(recovered.status, 200, JSON.stringify(recovered.body));
  t.is(recovered.body.recovery?.outcome, 'complete');
  t.is(recovered.body.amountReceived, '700000000');
  t.is(recovered.body.paymentIntent.transactions.length, 1);
  const events = await eventTypes(w, s.id);
  t.is(events.filter((type) => type === 'TransferAlreadyReconciled').length, 1);
  t.is(events.filter((type) => type === 'PaymentDetected').length, 1);

  const again = await recover(w, paid.hash);
  t.is(again.body.recovery?.outcome, 'complete');
  t.deepEqual(await eventTypes(w, s.id), events, 'no new event on the session');
});
