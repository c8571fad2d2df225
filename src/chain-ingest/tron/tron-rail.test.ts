import test from 'ava';
import { privateKeyToAccount } from 'viem/accounts';
import { deriveDepositAddress } from '../evm/contracts/deposit-address.ts';
import { RpcConfigError } from '../evm/networks/rpc-config.ts';
import { loadSolanaSetup } from '../solana/solana-setup.ts';
import type { RailNetwork } from '../rail.ts';
import { evmToTron, tronToEvm } from './address.ts';
import { tronDepositAddress } from './deposit-address.ts';
import { TRON_LOCAL_CHAIN_ID, TRON_MAINNET_CHAIN_ID, TRON_NILE_CHAIN_ID } from './networks.ts';
import { createTronRail, tronFollowedNetwork } from './tron-rail.ts';
import { loadTronSetup, TronConfigError } from './tron-setup.ts';

// Addresses from Tron's docs ("Accounts and keys") and mainnet contracts, used only as well-formed T… values.
const FACTORY = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
const FORWARDER = 'TEkxiTehnzSmSe2XqrBj4w32RUN966rdz8';
const MERCHANT = 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8';
const SESSION = '0b9c3d4e-1f2a-4b3c-8d4e-5f6a7b8c9d0e';

const mainnetEnv = {
  [`WEIR_RPC_${TRON_MAINNET_CHAIN_ID}`]: 'https://tron.example/jsonrpc',
  [`WEIR_TRON_FACTORY_${TRON_MAINNET_CHAIN_ID}`]: FACTORY,
  [`WEIR_TRON_FORWARDER_${TRON_MAINNET_CHAIN_ID}`]: FORWARDER,
};

const local = {
  rpcUrl: 'http://127.0.0.1:1/',
  sendUrl: 'http://127.0.0.1:2/',
  tokens: {
    usdt: evmToTron('0x5fbdb2315678afecb367f032d93f642f64180aa3'),
    usdc: evmToTron('0xe7f1725e7734ce288f8367e1bb143e90bb3f0512'),
  },
  factory: evmToTron('0x9fe46736679d2d9a65f0992f2272de9f3c7fa6e0'),
  sweeperKey: `0x${'11'.repeat(32)}` as const,
};

test('mainnet is offered with an endpoint and a factory; its deposit addresses are the TVM CREATE2 (0x41) ones', async (t) => {
  const offered = await loadTronSetup({ env: mainnetEnv });
  t.deepEqual(
    offered.map((o) => o.network.network),
    ['tron-mainnet'],
  );
  const rail = createTronRail({ offered });
  const [network] = rail.networks('live') as [RailNetwork];
  t.is(network.kind, 'tron');
  t.deepEqual(
    network.assets.map((a) => `${a.symbol} ${a.address}`),
    ['TRX native', 'USDT TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', 'USDC TEkxiTehnzSmSe2XqrBj4w32RUN966rdz8'],
  );
  t.deepEqual(rail.networks('test'), []);
  const address = rail.depositAddress({
    network,
    organizationId: 'org',
    checkoutSessionId: SESSION,
    merchantAddress: MERCHANT,
  });
  t.is(
    address,
    tronDepositAddress({
      factoryAddress: FACTORY,
      implementationAddress: FORWARDER,
      merchantAddress: MERCHANT,
      sessionId: SESSION,
    }),
  );
  // Not the EVM (0xff) address of the same inputs.
  t.not(
    tronToEvm(address),
    deriveDepositAddress({
      factoryAddress: tronToEvm(FACTORY),
      merchantAddress: tronToEvm(MERCHANT),
      sessionId: SESSION,
    }),
  );
  t.regex(address, /^T/);
});

test('the local chain derives as its EVM node does (0xff), in T… form', async (t) => {
  const offered = await loadTronSetup({ env: {}, local });
  const rail = createTronRail({ offered });
  const [network] = rail.networks('test') as [RailNetwork];
  t.is(network.chainId, TRON_LOCAL_CHAIN_ID);
  t.deepEqual(rail.networks('live'), []);
  const address = rail.depositAddress({
    network,
    organizationId: 'org',
    checkoutSessionId: SESSION,
    merchantAddress: MERCHANT,
  });
  t.is(
    address,
    evmToTron(
      deriveDepositAddress({
        factoryAddress: tronToEvm(local.factory),
        merchantAddress: tronToEvm(MERCHANT),
        sessionId: SESSION,
      }),
    ),
  );
  // The follower follows the 20-byte form of the contracts.
  t.deepEqual(
    tronFollowedNetwork(offered[0]!).tokens.map((token) => token.address),
    ['0x5fbdb2315678afecb367f032d93f642f64180aa3', '0xe7f1725e7734ce288f8367e1bb143e90bb3f0512'],
  );
});

test('a merchant wallet is refused with a reason: bad checksum, hex form, zero address, Weir machinery', async (t) => {
  const offered = await loadTronSetup({ env: mainnetEnv });
  const rail = createTronRail({ offered });
  const [network] = rail.networks('live') as [RailNetwork];
  const unpayable = (address: string) => rail.unpayableAddress({ network, address });
  t.is(unpayable(MERCHANT), null);
  t.regex(unpayable(`${MERCHANT.slice(0, -1)}9`) ?? '', /checksum/);
  t.regex(unpayable('0x52908400098527886e0f7030069857d2e4169ee7') ?? '', /hex address/);
  t.regex(unpayable('T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb') ?? '', /zero address/);
  t.regex(unpayable(FACTORY) ?? '', /ForwarderFactory/);
  t.regex(unpayable(FORWARDER) ?? '', /Forwarder contract/);
});

test('the payment request names the T… address, the amount in whole units, and the TRC-20 contract', (t) => {
  const rail = createTronRail({ offered: [] });
  const address = (asset: string, decimals: number) => ({
    id: 'a',
    checkoutSessionId: SESSION,
    network: 'tron-mainnet',
    asset: {
      id: 'x',
      chainId: TRON_MAINNET_CHAIN_ID,
      symbol: 'USDT',
      name: 'Tether USD',
      currency: 'usdt',
      address: asset,
      decimals,
    },
    paymentAddress: MERCHANT,
    merchantAddress: MERCHANT,
    gas: '0',
    gasAmount: '0',
  });
  t.deepEqual(rail.paymentRequest({ address: address(FACTORY, 6), amountDue: 25_500_000n, words: {} }), {
    uri: `tron:${MERCHANT}?amount=25.5&token=${FACTORY}`,
    payee: MERCHANT,
  });
  t.is(
    rail.paymentRequest({ address: address('native', 6), amountDue: 7n, words: {} }).uri,
    `tron:${MERCHANT}?amount=0.000007`,
  );
});

test('configuration: Tron chain ids are accepted for RPC by every family; a factory needs its forwarder; bad values are named', async (t) => {
  // Nile's endpoint without a factory: not offered, and not an error.
  t.deepEqual(await loadTronSetup({ env: { [`WEIR_RPC_${TRON_NILE_CHAIN_ID}`]: 'https://nile.example/jsonrpc' } }), []);
  // The Solana rail reads the same variables and leaves Tron's alone.
  t.deepEqual(await loadSolanaSetup({ env: mainnetEnv }), []);
  const noForwarder = await t.throwsAsync(
    loadTronSetup({
      env: { [`WEIR_TRON_FACTORY_${TRON_MAINNET_CHAIN_ID}`]: FACTORY },
    }),
    { instanceOf: TronConfigError },
  );
  t.regex(noForwarder.message, /WEIR_TRON_FORWARDER_728126428/);
  const badFactory = await t.throwsAsync(
    loadTronSetup({
      env: { ...mainnetEnv, [`WEIR_TRON_FACTORY_${TRON_MAINNET_CHAIN_ID}`]: `${FACTORY.slice(0, -1)}u` },
    }),
    { instanceOf: TronConfigError },
  );
  t.regex(badFactory.message, /WEIR_TRON_FACTORY_728126428 fails its Base58Check checksum/);
  await t.throwsAsync(loadTronSetup({ env: { WEIR_TRON_FACTORY_1: FACTORY } }), { instanceOf: TronConfigError });
  await t.throwsAsync(loadTronSetup({ env: { WEIR_RPC_999999: 'https://x.example' } }), { instanceOf: RpcConfigError });
  const deeper = await loadTronSetup({ env: { ...mainnetEnv, [`WEIR_CONFIRMATIONS_${TRON_MAINNET_CHAIN_ID}`]: '27' } });
  t.is(deeper[0]!.network.confirmations, 27);
});

test('sweepers: a real Tron network is swept with the operator key (natively), not without; the local one with its own key', async (t) => {
  const offered = await loadTronSetup({ env: mainnetEnv, local });
  const bare = createTronRail({ offered }).sweepExecutors?.() ?? new Map();
  t.deepEqual([...bare.keys()], []);
  const localOnly = createTronRail({ offered, localSweeper: { sendUrl: local.sendUrl, key: local.sweeperKey } });
  t.deepEqual([...(localOnly.sweepExecutors?.() ?? new Map()).keys()], ['tron-local']);
  const key = `0x${'22'.repeat(32)}` as const;
  const both = createTronRail({
    offered,
    localSweeper: { sendUrl: local.sendUrl, key: local.sweeperKey, native: true },
    sweeperKey: key,
  });
  t.deepEqual([...(both.sweepExecutors?.() ?? new Map()).keys()].sort(), ['tron-local', 'tron-mainnet']);
  // The operator's sweeper is Weir machinery on the real network: no merchant wallet.
  const [mainnet] = both.networks('live') as [RailNetwork];
  t.is(
    both.unpayableAddress({ network: mainnet, address: evmToTron(privateKeyToAccount(key).address) }),
    "is Weir's sweeper account",
  );
});
