import test from 'ava';
import {
  defineEvmNetwork,
  explorerTxUrl,
  NetworkDefinitionError,
  toRailNetwork,
  type EvmNetworkDefinition,
} from './define-network.ts';

const valid = {
  network: 'example-chain',
  chainId: 4242,
  name: 'Example Chain',
  environment: 'test',
  nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
  explorer: { name: 'Example Scan', txUrl: 'https://scan.example/tx/{hash}' },
  confirmations: 3,
  confirmationsSource: 'test fixture',
  blockTimeMs: 2_000,
  assets: [
    { symbol: 'ETH', name: 'Ether', currency: 'eth', address: 'native', decimals: 18 },
    {
      symbol: 'USDC',
      name: 'USD Coin',
      currency: 'usdc',
      address: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48',
      decimals: 6,
    },
    {
      symbol: 'USDC.e',
      name: 'Bridged USDC',
      currency: 'usdc',
      address: '0x2791Bca1f2de4661ED88A30C99A7a9449Aa84174',
      decimals: 6,
    },
  ],
} as const satisfies EvmNetworkDefinition;

function withChange(change: Partial<EvmNetworkDefinition>): EvmNetworkDefinition {
  return { ...valid, ...change };
}

test('a valid definition comes back frozen, deeply, with kind evm', (t) => {
  const network = defineEvmNetwork(valid);
  t.is(network.kind, 'evm');
  t.is(network.chainId, 4242);
  t.true(Object.isFrozen(network));
  t.true(Object.isFrozen(network.assets));
  t.true(Object.isFrozen(network.assets[0]));
  t.true(Object.isFrozen(network.nativeCurrency));
  t.true(Object.isFrozen(network.explorer));
  t.throws(() => {
    (network.assets as unknown as unknown[]).push({});
  });
});

test('toRailNetwork gives ids <network>:<symbol>, the chain id on each asset and native as the coin address', (t) => {
  const rail = toRailNetwork(defineEvmNetwork(valid));
  t.deepEqual(rail, {
    network: 'example-chain',
    chainId: 4242,
    name: 'Example Chain',
    kind: 'evm',
    environment: 'test',
    nativeCurrency: { symbol: 'ETH', decimals: 18 },
    explorerTxUrl: 'https://scan.example/tx/{hash}',
    explorerName: 'Example Scan',
    assets: [
      {
        id: 'example-chain:eth',
        name: 'Ether',
        symbol: 'ETH',
        currency: 'eth',
        chainId: 4242,
        address: 'native',
        decimals: 18,
      },
      {
        id: 'example-chain:usdc',
        name: 'USD Coin',
        symbol: 'USDC',
        currency: 'usdc',
        chainId: 4242,
        address: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48',
        decimals: 6,
      },
      {
        id: 'example-chain:usdc.e',
        name: 'Bridged USDC',
        symbol: 'USDC.e',
        currency: 'usdc',
        chainId: 4242,
        address: '0x2791Bca1f2de4661ED88A30C99A7a9449Aa84174',
        decimals: 6,
      },
    ],
  });
});

test('the native coin id uses its currency, and key overrides the id', (t) => {
  const rail = toRailNetwork(
    defineEvmNetwork(
      withChange({
        nativeCurrency: { name: 'Test BNB', symbol: 'tBNB', decimals: 18 },
        assets: [
          { symbol: 'tBNB', name: 'Test BNB', currency: 'bnb', address: 'native', decimals: 18 },
          {
            symbol: 'USDbC',
            name: 'USD Base Coin',
            currency: 'usdc',
            address: '0xd9aAEc86B65D86f6A7B5B1b0c42FFA531710b6CA',
            decimals: 6,
            key: 'usdbc',
          },
        ],
      }),
    ),
  );
  t.deepEqual(
    rail.assets.map((a) => a.id),
    ['example-chain:bnb', 'example-chain:usdbc'],
  );
});

test('explorerTxUrl fills in the hash', (t) => {
  t.is(explorerTxUrl(defineEvmNetwork(valid), '0xabc'), 'https://scan.example/tx/0xabc');
});

const invalid: [string, Partial<EvmNetworkDefinition>, RegExp][] = [
  [
    'a bus name with capitals or underscores',
    { network: 'Base_Sepolia' },
    /lowercase letters and digits joined by dashes/,
  ],
  ['a non-positive chain id', { chainId: 0 }, /chainId must be a positive integer/],
  ['a fractional chain id', { chainId: 1.5 }, /chainId must be a positive integer/],
  [
    'an explorer URL without {hash}',
    { explorer: { name: 'x', txUrl: 'https://scan.example/tx/' } },
    /must contain "\{hash\}"/,
  ],
  [
    'an explorer URL that is not http',
    { explorer: { name: 'x', txUrl: 'ftp://scan.example/tx/{hash}' } },
    /must be http\(s\)/,
  ],
  ['zero confirmations', { confirmations: 0 }, /confirmations must be an integer >= 1/],
  ['no confirmations source', { confirmationsSource: ' ' }, /confirmationsSource/],
  ['a non-positive block time', { blockTimeMs: 0 }, /blockTimeMs/],
  ['an environment other than test or live', { environment: 'prod' as 'live' }, /environment must be/],
  [
    'a lowercase (unchecksummed) address',
    {
      assets: [
        {
          symbol: 'USDC',
          name: 'USD Coin',
          currency: 'usdc',
          address: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48',
          decimals: 6,
        },
      ],
    },
    /must be EIP-55 checksummed, write 0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48/,
  ],
  [
    'a wrongly checksummed address',
    {
      assets: [
        {
          symbol: 'USDC',
          name: 'USD Coin',
          currency: 'usdc',
          address: '0xa0B86991c6218b36c1d19D4a2e9Eb0cE3606eB48',
          decimals: 6,
        },
      ],
    },
    /must be EIP-55 checksummed/,
  ],
  [
    'a malformed address',
    { assets: [{ symbol: 'USDC', name: 'USD Coin', currency: 'usdc', address: '0x1234', decimals: 6 }] },
    /is not an address/,
  ],
  [
    'two assets with the same id',
    {
      assets: [
        {
          symbol: 'USDC',
          name: 'USD Coin',
          currency: 'usdc',
          address: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48',
          decimals: 6,
        },
        {
          symbol: 'usdc',
          name: 'Other',
          currency: 'usdc',
          address: '0x2791Bca1f2de4661ED88A30C99A7a9449Aa84174',
          decimals: 6,
        },
      ],
    },
    /share the id example-chain:usdc/,
  ],
  [
    'two assets at the same address',
    {
      assets: [
        {
          symbol: 'USDC',
          name: 'USD Coin',
          currency: 'usdc',
          address: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48',
          decimals: 6,
        },
        {
          symbol: 'USDC2',
          name: 'Again',
          currency: 'usdc',
          address: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48',
          decimals: 6,
        },
      ],
    },
    /share the address/,
  ],
  [
    'two native coins',
    {
      assets: [
        { symbol: 'ETH', name: 'Ether', currency: 'eth', address: 'native', decimals: 18 },
        { symbol: 'WAT', name: 'Ether again', currency: 'wat', address: 'native', decimals: 18 },
      ],
    },
    /share the address native/,
  ],
  [
    'a native coin whose decimals differ',
    { assets: [{ symbol: 'ETH', name: 'Ether', currency: 'eth', address: 'native', decimals: 6 }] },
    /native coin has 18 decimals, not 6/,
  ],
  [
    'fractional decimals',
    {
      assets: [
        {
          symbol: 'USDC',
          name: 'USD Coin',
          currency: 'usdc',
          address: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48',
          decimals: 6.5,
        },
      ],
    },
    /decimals must be an integer/,
  ],
  [
    'an uppercase currency',
    {
      assets: [
        {
          symbol: 'USDC',
          name: 'USD Coin',
          currency: 'USDC',
          address: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48',
          decimals: 6,
        },
      ],
    },
    /currency must be a lowercase code/,
  ],
];

for (const [what, change, message] of invalid) {
  test(`defineEvmNetwork rejects ${what}`, (t) => {
    const error = t.throws(() => defineEvmNetwork(withChange(change)), { instanceOf: NetworkDefinitionError });
    t.regex(error.message, message);
    t.regex(error.message, /^network "/);
  });
}
