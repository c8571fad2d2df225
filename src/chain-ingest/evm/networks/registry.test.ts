import test from 'ava';
import { EVM_NETWORKS } from './all-networks.ts';
import { base, baseSepolia } from './base.ts';
import { devnetNetwork } from './devnet.ts';
import { ethereum, ethereumSepolia } from './ethereum.ts';
import { polygon } from './polygon.ts';
import { createNetworkRegistry, NetworkRegistryError } from './registry.ts';

const devnet = devnetNetwork({
  usdc: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
  usdt: '0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512',
  dai: '0x9fE46736679D2D9A65f0992F10D64B5c1b2d7A2E',
});

function registry() {
  return createNetworkRegistry({
    networks: [...EVM_NETWORKS, devnet],
    rpc: {
      1: { http: ['https://eth.example/v2/key'], ws: ['wss://eth.example/v2/key'] },
      8453: { http: [], ws: ['wss://base.example'] },
      84532: { http: ['https://base-sepolia.example'], ws: [] },
      31337: { http: ['http://127.0.0.1:8545'], ws: [] },
    },
  });
}

test('offered lists only networks of that environment with an HTTP endpoint', (t) => {
  const r = registry();
  t.deepEqual(
    r.offered('live').map((n) => n.network),
    ['ethereum'],
  );
  t.deepEqual(
    r.offered('test').map((n) => n.network),
    ['base-sepolia', 'devnet'],
  );
});

test('a network with only a WebSocket endpoint, or none, is not offered but is still known', (t) => {
  const r = registry();
  t.false(r.offered('live').includes(base));
  t.is(r.byChainId(8453), base);
  t.is(r.byNetwork('polygon'), polygon);
  t.deepEqual(r.endpoints(8453), { http: [], ws: ['wss://base.example'] });
  t.deepEqual(r.endpoints(137), { http: [], ws: [] });
  t.is(r.all().length, EVM_NETWORKS.length + 1);
});

test('byChainId and byNetwork find networks and return undefined for strangers', (t) => {
  const r = registry();
  t.is(r.byChainId(1), ethereum);
  t.is(r.byChainId(11_155_111), ethereumSepolia);
  t.is(r.byNetwork('base-sepolia'), baseSepolia);
  t.is(r.byNetwork('devnet'), devnet);
  t.is(r.byChainId(999), undefined);
  t.is(r.byNetwork('dogechain'), undefined);
});

test('railNetworks gives the offered networks as rail networks', (t) => {
  const [rail] = registry().railNetworks('live');
  t.is(rail?.network, 'ethereum');
  t.is(rail?.kind, 'evm');
  t.is(rail?.explorerTxUrl, 'https://etherscan.io/tx/{hash}');
  t.deepEqual(
    rail?.assets.find((a) => a.currency === 'usdc'),
    {
      id: 'ethereum:usdc',
      name: 'USD Coin',
      symbol: 'USDC',
      currency: 'usdc',
      chainId: 1,
      address: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48',
      decimals: 6,
    },
  );
});

test('assetByAddress matches any letter case, and native or the zero address give the coin', (t) => {
  const r = registry();
  t.is(r.assetByAddress(1, '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48')?.id, 'ethereum:usdc');
  t.is(r.assetByAddress(1, '0xA0B86991C6218B36C1D19D4A2E9EB0CE3606EB48')?.id, 'ethereum:usdc');
  t.is(r.assetByAddress(137, '0x2791Bca1f2de4661ED88A30C99A7a9449Aa84174')?.id, 'polygon:usdc.e');
  t.is(r.assetByAddress(56, '0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d')?.decimals, 18);
  t.is(r.assetByAddress(1, 'native')?.id, 'ethereum:eth');
  t.is(r.assetByAddress(137, '0x0000000000000000000000000000000000000000')?.id, 'polygon:pol');
  t.is(r.assetByAddress(31337, '0x5fbdb2315678afecb367f032d93f642f64180aa3')?.id, 'devnet:usdc');
  // The same contract address on another chain is another chain's business.
  t.is(r.assetByAddress(8453, '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48'), undefined);
  t.is(r.assetByAddress(999, 'native'), undefined);
  // The OP Stack WETH predeploy resolves per chain.
  t.is(r.assetByAddress(8453, '0x4200000000000000000000000000000000000006')?.id, 'base:weth');
  t.is(r.assetByAddress(10, '0x4200000000000000000000000000000000000006')?.id, 'optimism:weth');
});

test('endpoints for an unknown chain id are an error naming it', (t) => {
  const error = t.throws(
    () =>
      createNetworkRegistry({
        networks: [ethereum],
        rpc: { 1: { http: ['https://a.example'], ws: [] }, 5: { http: ['https://b.example'], ws: [] } },
      }),
    { instanceOf: NetworkRegistryError },
  );
  t.regex(error.message, /unknown chain id\(s\) 5/);
});

test('two networks with one chain id or one bus name are an error', (t) => {
  t.throws(() => createNetworkRegistry({ networks: [ethereum, ethereum], rpc: {} }), {
    instanceOf: NetworkRegistryError,
    message: /share chain id 1/,
  });
  const clash = { ...base, chainId: 999_999 };
  t.throws(() => createNetworkRegistry({ networks: [base, clash], rpc: {} }), {
    instanceOf: NetworkRegistryError,
    message: /two networks are named base/,
  });
});

test('the registry keeps its own copy of the endpoints', (t) => {
  const http = ['https://eth.example'];
  const r = createNetworkRegistry({ networks: [ethereum], rpc: { 1: { http, ws: [] } } });
  http.pop();
  t.deepEqual(
    r.offered('live').map((n) => n.network),
    ['ethereum'],
  );
});
