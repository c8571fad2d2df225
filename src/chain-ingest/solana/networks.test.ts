import test from 'ava';
import { isAddress } from '@solana/kit';
import { KNOWN_EVM_CHAIN_IDS } from '../evm/networks/all-networks.ts';
import { parseRpcEnv } from '../evm/networks/rpc-config.ts';
import { NATIVE_ASSET_ADDRESS } from '../network-definition.ts';
import {
  defineSolanaNetwork,
  TOKEN_2022_PROGRAM_ADDRESS,
  TOKEN_PROGRAM_ADDRESS,
  toSolanaRailNetwork,
  type SolanaNetworkDefinition,
} from './define-network.ts';
import {
  KNOWN_SOLANA_CHAIN_IDS,
  SOLANA_NETWORKS,
  solanaDevnet,
  solanaLocalNetwork,
  solanaMainnet,
} from './networks.ts';

const LOCAL_MINTS = {
  usdc: 'Gh9ZwEmdLJ8DscKNTkTqPbNwLNNBjuSzaG9Vp2KGtKJr',
  usdt: 'BQcdHdAQW1hczDbBi9hiegXAR7A98Q9jx3X3iBBBDiq4',
};
const local = solanaLocalNetwork(LOCAL_MINTS, { rpcUrl: 'http://127.0.0.1:8899' });
const ALL = [...SOLANA_NETWORKS, local];

test('the chain ids read "SolM", "SolO" and "SolL" and collide with no EVM chain id', (t) => {
  const ascii = (id: number) => Buffer.from(id.toString(16), 'hex').toString('latin1');
  t.is(ascii(solanaMainnet.chainId), 'SolM');
  t.is(ascii(solanaDevnet.chainId), 'SolO');
  t.is(ascii(local.chainId), 'SolL');
  t.deepEqual([...KNOWN_SOLANA_CHAIN_IDS], [1_399_811_149, 1_399_811_151, 1_399_811_148]);
  for (const id of KNOWN_SOLANA_CHAIN_IDS) t.false(KNOWN_EVM_CHAIN_IDS.includes(id), String(id));
});

test('every mint is a base58 address of 32 bytes held by the Token program; SOL has 9 decimals, stablecoins 6', (t) => {
  for (const network of ALL) {
    t.is(network.nativeCurrency.decimals, 9, network.network);
    for (const asset of network.assets) {
      const where = `${network.network} ${asset.symbol}`;
      if (asset.address === NATIVE_ASSET_ADDRESS) {
        t.is(asset.decimals, 9, where);
        t.is(asset.currency, 'sol', where);
        continue;
      }
      t.true(isAddress(asset.address), where);
      t.is(asset.tokenProgram, TOKEN_PROGRAM_ADDRESS, where);
      t.is(asset.decimals, 6, where);
    }
  }
});

test('mainnet is live with USDC and USDT; devnet is test with Circle USDC and no USDT', (t) => {
  t.is(solanaMainnet.environment, 'live');
  t.is(solanaDevnet.environment, 'test');
  t.is(local.environment, 'test');
  const ids = (network: SolanaNetworkDefinition) =>
    toSolanaRailNetwork(network).assets.map((a) => `${a.id} ${a.address}`);
  t.deepEqual(ids(solanaMainnet), [
    'solana-mainnet:sol native',
    'solana-mainnet:usdc EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
    'solana-mainnet:usdt Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB',
  ]);
  t.deepEqual(ids(solanaDevnet), [
    'solana-devnet:sol native',
    'solana-devnet:usdc 4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU',
  ]);
  t.deepEqual(ids(local), [
    'solana-localnet:sol native',
    `solana-localnet:usdc ${LOCAL_MINTS.usdc}`,
    `solana-localnet:usdt ${LOCAL_MINTS.usdt}`,
  ]);
});

test('a payment is seen at confirmed and final at finalized everywhere', (t) => {
  for (const network of ALL) t.deepEqual({ ...network.commitment }, { seen: 'confirmed', final: 'finalized' });
});

test('the rail network carries kind solana, the explorer and the chain id', (t) => {
  const rail = toSolanaRailNetwork(solanaDevnet);
  t.like(rail, {
    network: 'solana-devnet',
    chainId: 1_399_811_151,
    kind: 'solana',
    environment: 'test',
    nativeCurrency: { symbol: 'SOL', decimals: 9 },
    explorerTxUrl: 'https://explorer.solana.com/tx/{hash}?cluster=devnet',
    explorerName: 'Solana Explorer',
  });
  t.is(
    local.explorer.txUrl,
    'https://explorer.solana.com/tx/{hash}?cluster=custom&customUrl=http%3A%2F%2F127.0.0.1%3A8899',
  );
});

const base: SolanaNetworkDefinition = solanaDevnet;

const bad: [string, Partial<SolanaNetworkDefinition>, RegExp][] = [
  [
    'a mint that is not base58 of 32 bytes',
    { assets: [{ ...base.assets[1]!, address: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48' as never }] },
    /asset USDC: "0xA0b8.*" is not a base58 address of 32 bytes/,
  ],
  [
    'a mint without its token program',
    { assets: [{ symbol: 'USDC', name: 'USD Coin', currency: 'usdc', address: base.assets[1]!.address, decimals: 6 }] },
    /asset USDC: tokenProgram must be the Token or Token-2022 program, got undefined/,
  ],
  [
    'final weaker than seen',
    { commitment: { seen: 'finalized', final: 'confirmed' } },
    /commitment\.final \(confirmed\) must be at least as strong as commitment\.seen \(finalized\)/,
  ],
  [
    'SOL with the wrong decimals',
    { assets: [{ symbol: 'SOL', name: 'Solana', currency: 'sol', address: 'native', decimals: 18 }] },
    /asset SOL: the native coin has 9 decimals, not 18/,
  ],
  ['a bus name with capitals', { network: 'Solana' }, /network must be lowercase letters and digits/],
];

for (const [what, change, message] of bad) {
  test(`defineSolanaNetwork rejects ${what}`, (t) => {
    const error = t.throws(() => defineSolanaNetwork({ ...base, ...change }));
    t.regex(error.message, message);
  });
}

test('a Token-2022 mint is accepted', (t) => {
  const network = defineSolanaNetwork({
    ...base,
    assets: [{ ...base.assets[1]!, tokenProgram: TOKEN_2022_PROGRAM_ADDRESS }],
  });
  t.is(network.assets[0]?.tokenProgram, TOKEN_2022_PROGRAM_ADDRESS);
});

test('solanaLocalNetwork rejects a malformed mint, naming it', (t) => {
  const error = t.throws(() => solanaLocalNetwork({ ...LOCAL_MINTS, usdt: 'nope' }));
  t.regex(error.message, /mints\.usdt must be a base58 address of 32 bytes, got "nope"/);
});

test('RPC endpoints are configured by chain id like the EVM networks', (t) => {
  const rpc = parseRpcEnv(
    { WEIR_RPC_1399811149: 'https://solana.example/key,wss://solana.example/key' },
    { knownChainIds: [...KNOWN_EVM_CHAIN_IDS, ...KNOWN_SOLANA_CHAIN_IDS] },
  );
  t.deepEqual(rpc, { 1399811149: { http: ['https://solana.example/key'], ws: ['wss://solana.example/key'] } });
});
