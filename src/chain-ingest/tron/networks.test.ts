import test from 'ava';
import { KNOWN_EVM_CHAIN_IDS } from '../evm/networks/all-networks.ts';
import { parseRpcEnv } from '../evm/networks/rpc-config.ts';
import { KNOWN_SOLANA_CHAIN_IDS } from '../solana/networks.ts';
import { NATIVE_ASSET_ADDRESS } from '../network-definition.ts';
import { evmToTron, tronAddressProblem } from './address.ts';
import { defineTronNetwork, toTronRailNetwork, type TronNetworkDefinition } from './define-network.ts';
import {
  KNOWN_TRON_CHAIN_IDS,
  shownHashOn,
  TRON_LOCAL_CHAIN_ID,
  TRON_NETWORKS,
  tronLocalNetwork,
  tronMainnet,
  tronNile,
} from './networks.ts';

const LOCAL_TOKENS = {
  usdt: evmToTron('0xe7f1725e7734ce288f8367e1bb143e90bb3f0512'),
  usdc: evmToTron('0x9fe46736679d2d9a65f0992f2272de9f3c7fa6e0'),
};
const local = tronLocalNetwork(LOCAL_TOKENS, { confirmations: 3 });
const ALL = [...TRON_NETWORKS, local];

test('chain ids are what the nodes answer to eth_chainId, and collide with no EVM or Solana id', (t) => {
  t.is<number, number>(tronMainnet.chainId, Number.parseInt('2b6653dc', 16));
  t.is<number, number>(tronNile.chainId, Number.parseInt('cd8690dc', 16));
  t.is(Buffer.from(TRON_LOCAL_CHAIN_ID.toString(16), 'hex').toString('latin1'), 'TrnL');
  t.deepEqual([...KNOWN_TRON_CHAIN_IDS], [728_126_428, 3_448_148_188, 1_416_785_484]);
  for (const id of KNOWN_TRON_CHAIN_IDS) {
    t.false(KNOWN_EVM_CHAIN_IDS.includes(id), String(id));
    t.false(KNOWN_SOLANA_CHAIN_IDS.includes(id), String(id));
  }
});

test('every contract is a checksummed T… address; TRX and the stablecoins have 6 decimals', (t) => {
  for (const network of ALL) {
    t.is(network.nativeCurrency.decimals, 6, network.network);
    t.is(network.nativeCurrency.symbol, 'TRX', network.network);
    for (const asset of network.assets) {
      const where = `${network.network} ${asset.symbol}`;
      t.is(asset.decimals, 6, where);
      if (asset.address === NATIVE_ASSET_ADDRESS) t.is(asset.currency, 'trx', where);
      else t.is(tronAddressProblem(asset.address), null, where);
    }
  }
});

test('mainnet is live with TRX, USDT and USDC; Nile is test with TRX and the faucet USDT', (t) => {
  t.is(tronMainnet.environment, 'live');
  t.is(tronNile.environment, 'test');
  t.is(local.environment, 'test');
  const ids = (network: TronNetworkDefinition) => toTronRailNetwork(network).assets.map((a) => `${a.id} ${a.address}`);
  t.deepEqual(ids(tronMainnet), [
    'tron-mainnet:trx native',
    'tron-mainnet:usdt TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
    'tron-mainnet:usdc TEkxiTehnzSmSe2XqrBj4w32RUN966rdz8',
  ]);
  t.deepEqual(ids(tronNile), ['tron-nile:trx native', 'tron-nile:usdt TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf']);
  t.deepEqual(ids(local), [
    'tron-local:trx native',
    `tron-local:usdt ${LOCAL_TOKENS.usdt}`,
    `tron-local:usdc ${LOCAL_TOKENS.usdc}`,
  ]);
});

test('public networks wait for 19 blocks (solidification); the local one for what it is told', (t) => {
  t.is(tronMainnet.confirmations, 19);
  t.is(tronNile.confirmations, 19);
  t.is(local.confirmations, 3);
  t.is(tronLocalNetwork(LOCAL_TOKENS).confirmations, 19);
});

test('the rail network carries kind tron, Tronscan and the chain id', (t) => {
  t.like(toTronRailNetwork(tronNile), {
    network: 'tron-nile',
    chainId: 3_448_148_188,
    kind: 'tron',
    environment: 'test',
    nativeCurrency: { symbol: 'TRX', decimals: 6 },
    explorerTxUrl: 'https://nile.tronscan.org/#/transaction/{hash}',
    explorerName: 'Tronscan (Nile)',
  });
});

const base: TronNetworkDefinition = tronMainnet;
const usdt = base.assets[1]!;

const bad: [string, Partial<TronNetworkDefinition>, RegExp][] = [
  [
    'a contract whose checksum fails',
    { assets: [{ ...usdt, address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u' as never }] },
    /asset USDT: contract "TR7NH.*" fails its Base58Check checksum/,
  ],
  [
    'a contract in hex',
    { assets: [{ ...usdt, address: '41a614f803b6fd780986a42c78ec9c7f77e6ded13c' as never }] },
    /asset USDT: contract "41a6.*" contains "0", which is not a base58 character/,
  ],
  [
    'TRX with 18 decimals',
    { assets: [{ symbol: 'TRX', name: 'Tronix', currency: 'trx', address: 'native', decimals: 18 }] },
    /asset TRX: the native coin has 6 decimals, not 18/,
  ],
  ['no confirmations', { confirmations: 0 }, /confirmations must be a positive integer, got 0/],
  ['two assets at one contract', { assets: [usdt, { ...usdt, symbol: 'USDT2' }] }, /two assets share the address/],
];

for (const [what, change, message] of bad) {
  test(`defineTronNetwork rejects ${what}`, (t) => {
    const error = t.throws(() => defineTronNetwork({ ...base, ...change }));
    t.regex(error.message, message);
  });
}

test('tronLocalNetwork rejects a token address failing its checksum, naming it', (t) => {
  const error = t.throws(() => tronLocalNetwork({ ...LOCAL_TOKENS, usdc: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u' }));
  t.regex(error.message, /tokens\.usdc "TR7N.*" fails its Base58Check checksum/);
});

test('RPC endpoints are configured by chain id once the Tron ids are known to the parser', (t) => {
  const env = { WEIR_RPC_728126428: 'https://tron.example/jsonrpc' };
  t.throws(() => parseRpcEnv(env), { message: /unknown chain id 728126428/ });
  const rpc = parseRpcEnv(env, { knownChainIds: [...KNOWN_EVM_CHAIN_IDS, ...KNOWN_TRON_CHAIN_IDS] });
  t.deepEqual(rpc, { 728126428: { http: ['https://tron.example/jsonrpc'], ws: [] } });
});

test('a hash on a Tron chain is shown as its bare txID; a reconciliation id, one already bare and any other chain’s are left as they are', (t) => {
  const txid = 'AB'.repeat(32);
  for (const chainId of KNOWN_TRON_CHAIN_IDS) t.is(shownHashOn(chainId, `0x${txid}`), txid);
  t.is(shownHashOn(TRON_LOCAL_CHAIN_ID, txid), txid);
  t.is(shownHashOn(TRON_LOCAL_CHAIN_ID, `reconciliation-${'0'.repeat(64)}`), `reconciliation-${'0'.repeat(64)}`);
  t.is(shownHashOn(1, `0x${txid}`), `0x${txid}`);
});
