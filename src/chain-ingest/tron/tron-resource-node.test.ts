import test from 'ava';
import { evmToTron } from './address.ts';
import { startLocalTron } from './devnet/local-tron.ts';
import { createTronResourceNode, tronHttpApiBase } from './tron-resource-node.ts';

/*
 * The sweeper's resource reads against the local Tron's proxy, which answers java-tron's HTTP API
 * calls (`/wallet/getaccountresource`, `/wallet/getchainparameters`) beside its JSON-RPC, as a
 * full node does: the product reads it exactly as it would a real node.
 */

const account = evmToTron('0x90F79bf6EB2c4f870365E785982E1f101E93b906');

test('the HTTP API sits beside the JSON-RPC: /jsonrpc is dropped from the node URL', (t) => {
  t.is(tronHttpApiBase('https://nile.trongrid.io/jsonrpc'), 'https://nile.trongrid.io');
  t.is(tronHttpApiBase('https://node.example/jsonrpc/'), 'https://node.example');
  t.is(tronHttpApiBase('http://127.0.0.1:8545'), 'http://127.0.0.1:8545');
});

test("an account's resources, the chain's prices and an energy estimate, read through the proxy", async (t) => {
  const tron = await startLocalTron({ finalizedDepth: 1 });
  t.teardown(() => tron.stop());
  const node = createTronResourceNode(tron.proxy.url);
  // Every account has the free 600 bandwidth and nothing else until it stakes.
  t.deepEqual(await node.accountResources(account), { energy: 0n, stakedBandwidth: 0n, freeBandwidth: 600n });
  tron.proxy.setAccountResource(account, {
    EnergyLimit: 200_000,
    EnergyUsed: 50_000,
    NetLimit: 1000,
    freeNetUsed: 100,
  });
  t.deepEqual(await node.accountResources(account), { energy: 150_000n, stakedBandwidth: 1000n, freeBandwidth: 500n });
  // The JSON-RPC control method does the same, with the hex form.
  await fetch(tron.proxy.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'weir_setAccountResource',
      params: ['0x90f79bf6eb2c4f870365e785982e1f101e93b906', { EnergyLimit: 7 }],
    }),
  });
  t.deepEqual(await node.accountResources(account), { energy: 7n, stakedBandwidth: 0n, freeBandwidth: 600n });
  t.deepEqual(await node.prices(), { energySun: 210n, bandwidthSun: 1000n });
  // A plain value transfer: the node's estimate (anvil's gas standing in for energy).
  t.is(
    await node.estimateEnergy({
      from: '0x90F79bf6EB2c4f870365E785982E1f101E93b906',
      to: '0x1000000000000000000000000000000000000001',
      data: '0x',
    }),
    21_000n,
  );
  t.is(await node.callDataBytes(`0x${'00'.repeat(32)}`), null);
  // Paths java-tron serves that the proxy does not, and a bad address, answer as a node would.
  const unknown = await fetch(`${tron.proxy.url}/wallet/getaccount`, { method: 'POST', body: '{}' });
  t.is(unknown.status, 404);
  const bad = await fetch(`${tron.proxy.url}/wallet/getaccountresource`, {
    method: 'POST',
    body: JSON.stringify({ address: 'nope', visible: true }),
  });
  t.regex(JSON.stringify(await bad.json()), /Invalid address/);
});
