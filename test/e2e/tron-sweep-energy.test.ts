import test, { type ExecutionContext } from 'ava';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTronWeir } from '../support/tron-weir.ts';

/*
 * The sweeper's Tron energy sources end to end on the local Tron: the sweeper reads its account's
 * energy and the chain's prices from the proxy's `/wallet/…` answers (as from a full node), and
 * records on the sweep what it used and the TRX it burnt. (The default, burn, is checked by the
 * USDT sweep in tron-payments.test.ts.) The rental provider is a double standing in for one.
 */

const DEPTH = 3;

/** A rental provider double: delegates the energy asked for to the receiver on the local Tron, as a provider would on chain. */
async function rentalDouble(t: ExecutionContext, delegate: (receiver: string, energy: number) => void) {
  const orders: { network: string; receiver: string; energy: string }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const order = JSON.parse(Buffer.concat(chunks).toString('utf8')) as (typeof orders)[number];
      orders.push(order);
      delegate(order.receiver, Number(order.energy));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ orderId: `order-${orders.length}`, costSun: '3000000' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/rent`, orders };
}

test('staked energy that covers the sweep: nothing is burnt, and the source is recorded', async (t) => {
  const w = await startTronWeir(t, { finalizedDepth: DEPTH, chainEnv: { WEIR_TRON_ENERGY_SOURCE: 'staked' } });
  w.tron.proxy.setAccountResource(w.sweeper, { EnergyLimit: 5_000_000 });
  const s = await w.session('usdt', '500000000');
  await w.payer().payTrc20(w.tokens.usdt, w.addressOf(s, 'usdt'), 5_000_000n);
  await w.mine(DEPTH);
  const swept = await w.until(s.id, (x) => x.sweeps.length === 1, 'the sweep');
  t.is(swept.sweeps[0]!.tron?.energySource, 'staked');
  t.is(swept.sweeps[0]!.tron?.trxBurnt, '0');
  t.is(swept.sweeps[0]!.gasCost, '0');
});

test('rented energy: the shortfall is rented for the sweeper before the sweep (against a provider double)', async (t) => {
  let proxy: { setAccountResource: (address: string, r: { EnergyLimit: number }) => void } | null = null;
  const provider = await rentalDouble(t, (receiver, energy) =>
    proxy?.setAccountResource(receiver, { EnergyLimit: energy }),
  );
  const w = await startTronWeir(t, {
    finalizedDepth: DEPTH,
    chainEnv: { WEIR_TRON_ENERGY_SOURCE: 'rented', WEIR_TRON_ENERGY_RENTAL_URL: provider.url },
  });
  proxy = w.tron.proxy;
  const s = await w.session('usdt', '500000000');
  await w.payer().payTrc20(w.tokens.usdt, w.addressOf(s, 'usdt'), 5_000_000n);
  await w.mine(DEPTH);
  const swept = await w.until(s.id, (x) => x.sweeps.length === 1, 'the sweep');
  t.is(provider.orders.length, 1);
  t.is(provider.orders[0]!.receiver, w.sweeper);
  const sweep = swept.sweeps[0]!;
  t.is(sweep.tron?.energySource, 'rented');
  t.is(sweep.tron?.rentalCost, '3000000');
  // The node's estimate was rented; what the sweep used beyond it (if anything) was burnt.
  const rented = BigInt(provider.orders[0]!.energy);
  const used = BigInt(sweep.gasUsed);
  t.is(BigInt(sweep.tron!.trxBurnt), used > rented ? (used - rented) * 210n : 0n);
});

/** What the node (the proxy's `/wallet/…`) answers about a transaction. */
async function walletCall(url: string, path: string, value: string): Promise<Record<string, unknown>> {
  const response = await fetch(`${url}/wallet/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ value }),
  });
  return (await response.json()) as Record<string, unknown>;
}

test('native sweeps: built, signed and broadcast through /wallet/…, and the TRX burnt is the node’s fee', async (t) => {
  const w = await startTronWeir(t, { finalizedDepth: DEPTH, nativeSweeps: true });
  // Some staked energy, less than the sweep needs: the node's fee is the burnt remainder, not an estimate.
  w.tron.proxy.setAccountResource(w.sweeper, { EnergyLimit: 20_000 });
  const s = await w.session('usdt', '500000000');
  const merchantBefore = await w.tokenBalance(w.tokens.usdt, w.merchant);
  await w.payer().payTrc20(w.tokens.usdt, w.addressOf(s, 'usdt'), 5_000_000n);
  await w.mine(DEPTH);
  const swept = await w.until(s.id, (x) => x.sweeps.length === 1, 'the sweep');
  const sweep = swept.sweeps[0]!;
  // A Tron txID as the API shows it (bare, as Tron's tools write it), known to the node's HTTP API.
  t.regex(sweep.transactionHash, /^[0-9a-f]{64}$/);
  const txID = sweep.transactionHash;
  const transaction = await walletCall(w.tron.proxy.url, 'gettransactionbyid', txID);
  t.is(transaction['txID'], txID);
  t.deepEqual(transaction['ret'], [{ contractRet: 'SUCCESS' }]);
  const info = await walletCall(w.tron.proxy.url, 'gettransactioninfobyid', txID);
  const receipt = info['receipt'] as { energy_usage_total: number; energy_fee: number; result: string };
  t.is(receipt.result, 'SUCCESS');
  t.is(sweep.tron?.trxBurnt, String(info['fee']));
  t.is(sweep.gasCost, String(info['fee']));
  t.is(sweep.gasUsed, String(receipt.energy_usage_total));
  t.is(receipt.energy_fee, (receipt.energy_usage_total - 20_000) * 210);
  t.is((await w.tokenBalance(w.tokens.usdt, w.merchant)) - merchantBefore, 5_000_000n);
  t.is(await w.tokenBalance(w.tokens.usdt, w.addressOf(s, 'usdt')), 0n);
});
