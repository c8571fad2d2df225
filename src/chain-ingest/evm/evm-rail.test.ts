import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { RpcRequestError, type Address, type Hex } from 'viem';
import { createFakeEvmNode } from '../../../test/support/fake-evm-node.ts';
import { SweepReceiptLostError } from '../../sweeper/sweep-errors.ts';
import { combineRails } from '../rail.ts';
import { createTestRail, TEST_NETWORK } from '../test-rail.ts';
import { forwarderImplementationAddress } from './contracts/deposit-address.ts';
import { createEvmRail } from './evm-rail.ts';
import { EVM_NETWORKS } from './networks/all-networks.ts';
import { base } from './networks/base.ts';
import { devnetNetwork } from './networks/devnet.ts';
import { createNetworkRegistry } from './networks/registry.ts';

const FACTORY: Address = '0x00000000000000000000000000000000000fac70';
/** Anvil's account 1: a key everyone knows, as the devnet's sweeper's is. */
const SWEEPER_KEY: Hex = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';
const SWEEPER: Address = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const DEVNET_TOKENS = {
  usdc: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
  usdt: '0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512',
  dai: '0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0',
};
const WALLET = '0x5Ea1Fee5EA1fEe5EA1feE5EA1Fee5Ea1Fee5Ea1F';

/** Base (live) and the local devnet, each with a factory; the keys as given. */
function rail(keys: { sweeperKey?: Hex; devnetSweeperKey?: Hex } = { sweeperKey: SWEEPER_KEY }) {
  const registry = createNetworkRegistry({
    networks: [...EVM_NETWORKS, devnetNetwork(DEVNET_TOKENS)],
    rpc: { 8453: { http: ['https://base.example'], ws: [] }, 31337: { http: ['http://127.0.0.1:1'], ws: [] } },
  });
  return createEvmRail({
    registry,
    factories: new Map([
      [8453, FACTORY],
      [31337, FACTORY],
    ]),
    ...keys,
  });
}
const baseNetwork = () => rail().networks('live')[0]!;

test('the EVM rail pays out to an ordinary wallet, in any letter case', (t) => {
  t.is(baseNetwork().network, 'base');
  for (const address of [WALLET, WALLET.toLowerCase()])
    t.is(rail().unpayableAddress({ network: baseNetwork(), address }), null);
});

test('the EVM rail refuses the zero address, precompiles, system and burn addresses, and the OP Stack predeploys', (t) => {
  const cases: [string, RegExp][] = [
    ['0x0000000000000000000000000000000000000000', /zero address/],
    ['0x0000000000000000000000000000000000000001', /precompile/],
    ['0x0000000000000000000000000000000000000100', /precompile/],
    ['0x0000000000000000000000000000000000001000', /system contract/],
    ['0x000000000000000000000000000000000000dEaD', /precompile or system contract/],
    ['0x000000000000000000000000000000000000ffff', /precompile/],
    ['0x4200000000000000000000000000000000000016', /OP Stack predeploy/],
    ['0x42000000000000000000000000000000000007fF', /OP Stack predeploy/],
  ];
  for (const [address, reason] of cases)
    t.regex(rail().unpayableAddress({ network: baseNetwork(), address }) ?? 'accepted', reason, address);
  // Just past each range.
  for (const address of ['0x0000000000000000000000000000000000010000', '0x4200000000000000000000000000000000000800'])
    t.is(rail().unpayableAddress({ network: baseNetwork(), address }), null, address);
});

test("the EVM rail refuses the network's token contracts, whatever their letter case", (t) => {
  const usdc = base.assets.find((a) => a.symbol === 'USDC')!.address;
  t.is(
    rail().unpayableAddress({ network: baseNetwork(), address: usdc.toLowerCase() }),
    'is the USDC token contract on Base: tokens sent to it are lost',
  );
  t.regex(rail().unpayableAddress({ network: baseNetwork(), address: usdc }) ?? '', /USDC token contract/);
});

test("the EVM rail refuses Weir's own machinery: the factory, the Forwarder it clones, the sweeper account", (t) => {
  const network = baseNetwork();
  t.regex(rail().unpayableAddress({ network, address: FACTORY }) ?? '', /Weir's ForwarderFactory on Base/);
  t.regex(
    rail().unpayableAddress({ network, address: forwarderImplementationAddress(FACTORY).toLowerCase() }) ?? '',
    /Forwarder contract of Weir's factory/,
  );
  t.regex(rail().unpayableAddress({ network, address: SWEEPER.toLowerCase() }) ?? '', /Weir's sweeper account/);
});

test('combined rails ask the rail that offers the network; the test rail follows the EVM rule', (t) => {
  const combined = combineRails([createTestRail(), rail()]);
  t.regex(
    combined.unpayableAddress({ network: TEST_NETWORK, address: '0x00000000000000000000000000000000000a11ce' }) ?? '',
    /USDC token contract on Weir Testnet/,
  );
  t.regex(
    combined.unpayableAddress({ network: TEST_NETWORK, address: '0x0000000000000000000000000000000000000000' }) ?? '',
    /zero address/,
  );
  t.is(combined.unpayableAddress({ network: TEST_NETWORK, address: FACTORY }), null, 'no factory on the test network');
  t.regex(combined.unpayableAddress({ network: baseNetwork(), address: FACTORY }) ?? '', /ForwarderFactory/);
});

test("live networks sweep with the operator's key only: the devnet's public key sweeps the devnet alone", (t) => {
  const devnetOnly = rail({ devnetSweeperKey: SWEEPER_KEY });
  t.deepEqual([...(devnetOnly.sweepExecutors?.() ?? new Map()).keys()], ['devnet']);
  const devnet = devnetOnly.networks('test').find((n) => n.network === 'devnet')!;
  t.regex(devnetOnly.unpayableAddress({ network: devnet, address: SWEEPER }) ?? '', /sweeper account/);
  // On Base that account is nothing of Weir's: it sends nothing there.
  t.is(devnetOnly.unpayableAddress({ network: baseNetwork(), address: SWEEPER }), null);
  t.deepEqual([...(rail({}).sweepExecutors?.() ?? new Map()).keys()], []);
  const operator = rail({ sweeperKey: SWEEPER_KEY, devnetSweeperKey: SWEEPER_KEY });
  t.deepEqual([...(operator.sweepExecutors?.() ?? new Map()).keys()].sort(), ['base', 'devnet']);
});

test("the rail's receipt timeout (WEIR_SWEEP_RECEIPT_TIMEOUT) reaches its sweeps: a flush the node takes and never mines is given up waiting for after the time set, its receipt lost", async (t) => {
  t.timeout(10_000, 'far less than the default bound of 180 s');
  const node = createFakeEvmNode({ chainId: 8453, factory: FACTORY });
  node.settings.automine = false;
  const { request } = node.transport({ retryCount: 0 });
  // The fake node over HTTP, as the rail reaches a real one.
  const server = createServer((incoming, answer) => {
    let body = '';
    incoming.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    incoming.on('end', async () => {
      const call = async ({ id, method, params }: { id: number; method: string; params: unknown }) => {
        try {
          return { jsonrpc: '2.0', id, result: await request({ method, params } as never) };
        } catch (error) {
          const code = error instanceof RpcRequestError ? error.code : -32603;
          const message = error instanceof RpcRequestError ? error.details : String(error);
          return { jsonrpc: '2.0', id, error: { code, message } };
        }
      };
      const parsed = JSON.parse(body) as Parameters<typeof call>[0] | Parameters<typeof call>[0][];
      const result = Array.isArray(parsed) ? await Promise.all(parsed.map(call)) : await call(parsed);
      answer.setHeader('content-type', 'application/json');
      answer.end(JSON.stringify(result));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => server.close());
  const registry = createNetworkRegistry({
    networks: EVM_NETWORKS,
    rpc: { 8453: { http: [`http://127.0.0.1:${(server.address() as AddressInfo).port}`], ws: [] } },
  });
  const rail = createEvmRail({
    registry,
    factories: new Map([[8453, FACTORY]]),
    sweeperKey: SWEEPER_KEY,
    receiptTimeoutMs: 50,
  });
  const executor = rail.sweepExecutors?.().get('base');
  t.truthy(executor);
  const error = await t.throwsAsync(
    executor!.flush(
      [
        {
          checkoutSessionId: '0b9c3d4e-1f2a-4b3c-8d4e-5f6a7b8c9d0e',
          depositAddress: '0x0000000000000000000000000000000000000001',
          merchantAddress: WALLET,
          assets: ['0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'],
        },
      ],
      async () => {},
    ),
    { instanceOf: SweepReceiptLostError },
  );
  t.regex(error.message, /was sent but its receipt could not be had/);
  t.is(node.sends.length, 1);
});
