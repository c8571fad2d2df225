import test from 'ava';
import { getAddress, isAddress, type Chain } from 'viem';
import * as chains from 'viem/chains';
import { EVM_NETWORKS, KNOWN_EVM_CHAIN_IDS } from './all-networks.ts';
import { arbitrum, arbitrumSepolia } from './arbitrum.ts';
import { base, baseSepolia } from './base.ts';
import { bsc, bscTestnet } from './bsc.ts';
import { NATIVE_ASSET_ADDRESS, toRailNetwork, type EvmNetwork } from './define-network.ts';
import { DEVNET_CHAIN_ID, devnetNetwork } from './devnet.ts';
import { ethereum, ethereumSepolia } from './ethereum.ts';
import { optimism, optimismSepolia } from './optimism.ts';
import { polygon, polygonAmoy } from './polygon.ts';

/** Addresses as a devnet deployment might print them: lowercase. */
const DEVNET_CONTRACTS = {
  usdc: '0x5fbdb2315678afecb367f032d93f642f64180aa3',
  usdt: '0xe7f1725e7734ce288f8367e1bb143e90bb3f0512',
  dai: '0x9fe46736679d2d9a65f0992f10d64b5c1b2d7a2e',
};
const devnet = devnetNetwork(DEVNET_CONTRACTS);
const ALL: readonly EvmNetwork[] = [...EVM_NETWORKS, devnet];

/** Each network and the viem chain definition it must agree with. */
const VIEM: [EvmNetwork, Chain][] = [
  [ethereum, chains.mainnet],
  [ethereumSepolia, chains.sepolia],
  [polygon, chains.polygon],
  [polygonAmoy, chains.polygonAmoy],
  [bsc, chains.bsc],
  [bscTestnet, chains.bscTestnet],
  [base, chains.base],
  [baseSepolia, chains.baseSepolia],
  [arbitrum, chains.arbitrum],
  [arbitrumSepolia, chains.arbitrumSepolia],
  [optimism, chains.optimism],
  [optimismSepolia, chains.optimismSepolia],
  [devnet, chains.hardhat],
];

/** Pairs of mainnet and testnet. */
const FAMILIES: [EvmNetwork, EvmNetwork][] = [
  [ethereum, ethereumSepolia],
  [polygon, polygonAmoy],
  [bsc, bscTestnet],
  [base, baseSepolia],
  [arbitrum, arbitrumSepolia],
  [optimism, optimismSepolia],
];

test('every contract address is a valid, EIP-55 checksummed address', (t) => {
  for (const network of ALL) {
    for (const asset of network.assets) {
      if (asset.address === NATIVE_ASSET_ADDRESS) continue;
      t.true(isAddress(asset.address, { strict: true }), `${network.network} ${asset.symbol}`);
      t.is(getAddress(asset.address), asset.address, `${network.network} ${asset.symbol} is checksummed`);
    }
  }
});

test('every network has exactly one native coin, with the native currency decimals', (t) => {
  for (const network of ALL) {
    const natives = network.assets.filter((a) => a.address === NATIVE_ASSET_ADDRESS);
    t.is(natives.length, 1, network.network);
    t.is(natives[0]?.decimals, network.nativeCurrency.decimals, network.network);
    t.is(network.nativeCurrency.decimals, 18, network.network);
  }
});

test('decimals are right for the chain: stablecoins 6 except Binance-Peg 18 on BSC, DAI and WETH 18', (t) => {
  const bscChains = new Set<number>([bsc.chainId, bscTestnet.chainId]);
  for (const network of ALL) {
    for (const asset of network.assets) {
      const where = `${network.network} ${asset.symbol}`;
      if (asset.currency === 'usdc' || asset.currency === 'usdt')
        t.is(asset.decimals, bscChains.has(network.chainId) ? 18 : 6, where);
      else t.is(asset.decimals, 18, where);
    }
  }
});

test('asset ids are unique across all networks, and each network has its assets unique by address', (t) => {
  const ids = ALL.flatMap((n) => toRailNetwork(n).assets.map((a) => a.id));
  t.is(new Set(ids).size, ids.length);
  for (const network of ALL) {
    const addresses = network.assets.map((a) => a.address.toLowerCase());
    t.is(new Set(addresses).size, addresses.length, network.network);
  }
});

test('chain ids and bus names are unique', (t) => {
  t.is(new Set(ALL.map((n) => n.chainId)).size, ALL.length);
  t.is(new Set(ALL.map((n) => n.network)).size, ALL.length);
  t.deepEqual(
    [...KNOWN_EVM_CHAIN_IDS].sort((a, b) => a - b),
    ALL.map((n) => n.chainId).sort((a, b) => a - b),
  );
});

test('mainnets are live and testnets (and the devnet) are test', (t) => {
  for (const [mainnet, testnet] of FAMILIES) {
    t.is(mainnet.environment, 'live', mainnet.network);
    t.is(testnet.environment, 'test', testnet.network);
    t.true(
      testnet.confirmations <= mainnet.confirmations,
      `${testnet.network} waits no longer than ${mainnet.network}`,
    );
  }
  t.is(devnet.environment, 'test');
  t.deepEqual(
    EVM_NETWORKS.filter((n) => n.environment === 'live').map((n) => n.network),
    ['ethereum', 'polygon', 'bsc', 'base', 'arbitrum', 'optimism'],
  );
});

test('chain ids, native currencies and explorers agree with viem/chains', (t) => {
  for (const [network, chain] of VIEM) {
    t.is(network.chainId, chain.id, network.network);
    t.is(network.nativeCurrency.decimals, chain.nativeCurrency.decimals, network.network);
    t.is(network.nativeCurrency.symbol, chain.nativeCurrency.symbol, network.network);
    if (network === devnet) continue;
    const explorer = chain.blockExplorers?.default.url;
    t.truthy(explorer, network.network);
    t.is(network.explorer.txUrl, `${explorer}/tx/{hash}`, network.network);
  }
});

test('every network says where its confirmation count comes from', (t) => {
  for (const network of ALL) {
    t.true(Number.isInteger(network.confirmations) && network.confirmations >= 1, network.network);
    t.true(network.confirmationsSource.length > 10, network.network);
    t.true(network.blockTimeMs > 0, network.network);
  }
});

test('each network offers the assets the gateway lists for it', (t) => {
  const ids = (network: EvmNetwork) => toRailNetwork(network).assets.map((a) => a.id);
  t.deepEqual(ids(ethereum), ['ethereum:eth', 'ethereum:usdc', 'ethereum:usdt', 'ethereum:dai', 'ethereum:weth']);
  t.deepEqual(ids(ethereumSepolia), ['ethereum-sepolia:eth', 'ethereum-sepolia:usdc']);
  t.deepEqual(ids(polygon), [
    'polygon:pol',
    'polygon:usdc',
    'polygon:usdc.e',
    'polygon:usdt',
    'polygon:dai',
    'polygon:weth',
  ]);
  t.deepEqual(ids(polygonAmoy), ['polygon-amoy:pol', 'polygon-amoy:usdc']);
  t.deepEqual(ids(bsc), ['bsc:bnb', 'bsc:usdc', 'bsc:usdt', 'bsc:dai', 'bsc:weth']);
  t.deepEqual(ids(bscTestnet), ['bsc-testnet:bnb', 'bsc-testnet:usdc', 'bsc-testnet:usdt']);
  t.deepEqual(ids(base), ['base:eth', 'base:usdc', 'base:usdbc', 'base:dai', 'base:weth']);
  t.deepEqual(ids(baseSepolia), ['base-sepolia:eth', 'base-sepolia:usdc']);
  t.deepEqual(ids(arbitrum), [
    'arbitrum:eth',
    'arbitrum:usdc',
    'arbitrum:usdc.e',
    'arbitrum:usdt',
    'arbitrum:dai',
    'arbitrum:weth',
  ]);
  t.deepEqual(ids(arbitrumSepolia), ['arbitrum-sepolia:eth', 'arbitrum-sepolia:usdc']);
  t.deepEqual(ids(optimism), [
    'optimism:eth',
    'optimism:usdc',
    'optimism:usdc.e',
    'optimism:usdt',
    'optimism:dai',
    'optimism:weth',
  ]);
  t.deepEqual(ids(optimismSepolia), ['optimism-sepolia:eth', 'optimism-sepolia:usdc']);
  t.deepEqual(ids(devnet), ['devnet:eth', 'devnet:usdc', 'devnet:usdt', 'devnet:dai']);
});

test('bridged USDC (USDC.e, USDbC) is currency usdc; wrapped ether is weth', (t) => {
  for (const network of ALL) {
    for (const asset of network.assets) {
      if (asset.symbol === 'USDC.e' || asset.symbol === 'USDbC') t.is(asset.currency, 'usdc');
      if (asset.symbol === 'WETH') t.is(asset.currency, 'weth');
    }
  }
});

test('networks in the same family that share a canonical contract use the same address', (t) => {
  // OP Stack predeploy WETH9, and the Sky/MakerDAO L2 Dai deployed at one address on Arbitrum and Optimism.
  const address = (network: EvmNetwork, symbol: string) => network.assets.find((a) => a.symbol === symbol)?.address;
  t.is(address(base, 'WETH'), '0x4200000000000000000000000000000000000006');
  t.is(address(optimism, 'WETH'), '0x4200000000000000000000000000000000000006');
  t.is(address(arbitrum, 'DAI'), address(optimism, 'DAI'));
});

test('devnetNetwork checksums the runtime addresses and rejects a malformed one', (t) => {
  t.is(devnet.chainId, DEVNET_CHAIN_ID);
  t.is(devnet.network, 'devnet');
  t.deepEqual(
    devnet.assets.map((a) => [a.symbol, a.address, a.decimals]),
    [
      ['ETH', 'native', 18],
      ['USDC', '0x5FbDB2315678afecb367f032d93F642f64180aa3', 6],
      ['USDT', '0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512', 6],
      ['DAI', '0x9fE46736679D2D9A65f0992F10D64B5c1b2d7A2E', 18],
    ],
  );
  const error = t.throws(() => devnetNetwork({ ...DEVNET_CONTRACTS, usdt: 'nope' }));
  t.regex(error.message, /contracts\.usdt must be a 0x-prefixed 20-byte address, got "nope"/);
  t.is(
    devnetNetwork(DEVNET_CONTRACTS, { explorerTxUrl: 'http://localhost:4000/tx/{hash}' }).explorer.txUrl,
    'http://localhost:4000/tx/{hash}',
  );
});
