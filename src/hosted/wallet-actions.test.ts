import test from 'ava';
import * as chains from 'viem/chains';
import {
  daiPaymentFixture,
  daiSessionFixture,
  paymentFixture,
  sessionFixture,
} from '../../machines/checkout-session.fixture.ts';
import type { SessionAddress } from '../../machines/checkout-session.types.ts';
import { EVM_NETWORKS } from '../chain-ingest/evm/networks/all-networks.ts';
import { toRailNetwork } from '../chain-ingest/evm/networks/define-network.ts';
import { devnetNetwork } from '../chain-ingest/evm/networks/devnet.ts';
import { TEST_NETWORK } from '../chain-ingest/test-rail.ts';
import { withUsdcChosen } from './payer-status.fixture.ts';
import { PUBLIC_RPC_URLS, remainingChainUnits, renderWalletActions, walletDue } from './wallet-actions.ts';

const DEVNET_CONTRACTS = {
  usdc: '0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512',
  usdt: '0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0',
  dai: '0xCf7Ed3AccA5a467e9e704C703E8D87F634fB0Fc9',
} as const;
const devnet = toRailNetwork(devnetNetwork(DEVNET_CONTRACTS));
const devnetUsdc: SessionAddress = {
  ...sessionFixture().addresses[0]!,
  id: 'addr-devnet',
  network: 'devnet',
  asset: devnet.assets.find((a) => a.currency === 'usdc')!,
};
const context = { networks: [devnet, TEST_NETWORK], devnet: { chainId: 31337, rpcUrl: 'http://127.0.0.1:8545' } };

test('what is left counts pending and confirmed payments, not withdrawn ones, and rounds up to the smallest unit', (t) => {
  const seen = (transferId: string, amount: string, status: 'pending' | 'confirmed' | 'withdrawn') => ({
    ...paymentFixture(transferId, amount),
    status,
    detectedAt: '2026-01-01T00:01:00.000Z',
    confirmedAt: null,
    late: false,
  });
  const usdc = sessionFixture().addresses[0]!;
  const dai = { ...usdc, asset: { ...usdc.asset, decimals: 18 } };
  const session = sessionFixture({
    payments: [
      seen('a', '100000000', 'confirmed'),
      // In an 18-decimal token of the currency: 6-decimal USDC cannot send 0.50000001.
      { ...seen('b', '50000001', 'pending'), asset: dai.asset, amountRaw: '500000010000000000' },
      seen('c', '100000000', 'withdrawn'),
    ],
  });
  // 3 - 1 - 0.50000001 = 1.49999999: 1.5 USDC (6 decimals), exactly that in DAI (18).
  t.is(remainingChainUnits(session, usdc), 1_500_000n);
  t.is(remainingChainUnits(session, dai), 1_499_999_990_000_000_000n);
  // An address whose sweep gas the payer pays owes that too (0.02 here).
  t.is(remainingChainUnits(session, { ...usdc, gasAmount: '2000000' }), 1_520_000n);
  t.is(remainingChainUnits(sessionFixture({ payments: [seen('d', '400000000', 'pending')] }), usdc), 0n);
});

test('what is left of a DAI session paid 1 wei short is 1 wei, not the 10^10 wei of 0.00000001 DAI', (t) => {
  const dai = daiSessionFixture();
  const shortBy = (status: 'pending' | 'confirmed') => ({
    ...daiPaymentFixture(`short-${status}`, '139929999999999'),
    status,
    detectedAt: '2026-01-01T00:01:00.000Z',
    confirmedAt: null,
    late: false,
  });
  t.is(remainingChainUnits({ ...dai, payments: [shortBy('confirmed')] }, dai.addresses[0]!), 1n);
  t.is(remainingChainUnits({ ...dai, payments: [shortBy('pending')] }, dai.addresses[0]!), 1n);
});

test('after part was paid into an address whose sweep gas is charged, what is left at any other asks that sweep too, as choosing it makes it', (t) => {
  const usdc = { ...sessionFixture().addresses[0]!, gas: '160000', gasAmount: '1440000000' };
  const other = { ...usdc, id: 'addr-other', network: 'weir-other', asset: { ...usdc.asset, id: 'weir-other:usdc' } };
  const paid = (gasAmount: string) =>
    sessionFixture({
      addresses: [usdc, { ...other, gasAmount }],
      payments: [
        {
          ...paymentFixture('a', '1000000000'),
          status: 'confirmed',
          detectedAt: '2026-01-01T00:01:00.000Z',
          confirmedAt: '2026-01-01T00:02:00.000Z',
          late: false,
        },
      ],
    });
  // 3 of goods and 14.40 of USDC's sweep, less the 10 paid: 7.40 at either; 1.00 more at one with gas of its own.
  t.is(remainingChainUnits(paid('0'), usdc), 7_400_000n);
  t.is(remainingChainUnits(paid('0'), { ...other, gasAmount: '0' }), 7_400_000n);
  t.is(remainingChainUnits(paid('100000000'), { ...other, gasAmount: '100000000' }), 8_400_000n);
  // Once chosen, the fee the session recorded is asked, as its status says (12.00 here, whatever came since).
  const method = {
    ...sessionFixture().paymentIntent,
    paymentMethod: withUsdcChosen(sessionFixture()).paymentIntent.paymentMethod,
  };
  const recorded = {
    ...paid('0'),
    amountDetails: { ...paid('0').amountDetails, amountGasFee: '1200000000' },
    paymentIntent: method,
  };
  t.is(remainingChainUnits(recorded, usdc), 5_000_000n);
});

test('walletDue names the chosen method and what is left; nothing before a choice or after the end', (t) => {
  const base = sessionFixture();
  const chosen = {
    ...base,
    paymentIntent: {
      ...base.paymentIntent,
      paymentMethod: {
        id: 'addr-usdc',
        type: 'wallet' as const,
        accountAddress: base.addresses[0]!.paymentAddress,
        asset: base.addresses[0]!.asset,
        amountDue: '3000000',
        options: { wallet: { assetId: 'weir-testnet:usdc', transactionHash: null, contractAddress: '0x' } },
      },
    },
  };
  t.deepEqual(walletDue(chosen), {
    addressId: 'addr-usdc',
    assetId: 'weir-testnet:usdc',
    amountRemainingRaw: '3000000',
  });
  t.is(walletDue(base), null);
  t.is(walletDue({ ...chosen, status: 'complete' }), null);
});

test('the test wallet is offered on a test session with a devnet address only, never in live or once the session is over', (t) => {
  const test = renderWalletActions(sessionFixture({ addresses: [devnetUsdc] }), context);
  t.regex(test, /Connect wallet/);
  t.regex(test, /Pay with test wallet/);
  t.regex(test, /data-chain-id="0x7a69"/);
  t.regex(test, /data-rpc-url="http:\/\/127.0.0.1:8545"/);
  t.regex(test, /data-explorer-tx-url=""/);
  t.regex(test, /data-amount="3000000"/);
  t.regex(test, /\/assets\/wallet\.js\?v=/);

  const live = renderWalletActions(sessionFixture({ environment: 'live', addresses: [devnetUsdc] }), context);
  t.regex(live, /Connect wallet/);
  t.notRegex(live, /test wallet/i);
  t.notRegex(renderWalletActions(sessionFixture(), context), /test wallet/i);
  t.notRegex(
    renderWalletActions(sessionFixture({ addresses: [devnetUsdc] }), { ...context, devnet: null }),
    /test wallet/i,
  );
  t.is(
    renderWalletActions(sessionFixture({ status: 'complete', addresses: [devnetUsdc] }), context),
    '<div id="wallet-actions"></div>',
  );
});

test("a local chain's placeholder explorer is no link after paying, on the devnet and any other local chain; one given to it is", (t) => {
  t.regex(renderWalletActions(sessionFixture(), context), /data-explorer-tx-url="" data-explorer-url=""/);
  const explored = toRailNetwork(devnetNetwork(DEVNET_CONTRACTS, { explorerTxUrl: 'http://127.0.0.1:4000/tx/{hash}' }));
  const html = renderWalletActions(sessionFixture({ addresses: [devnetUsdc] }), { ...context, networks: [explored] });
  t.regex(
    html,
    /data-explorer-tx-url="http:\/\/127.0.0.1:4000\/tx\/\{hash\}" data-explorer-url="http:\/\/127.0.0.1:4000"/,
  );
});

test('a real network carries its explorer and a public RPC endpoint, the one viem names for it', (t) => {
  const viemChains = Object.values(chains);
  for (const network of EVM_NETWORKS) {
    const url = PUBLIC_RPC_URLS[network.chainId];
    t.truthy(url, network.network);
    // Several viem chains may share an id (forks, renamed ones): one of them names the endpoint.
    t.true(
      viemChains.some(
        (chain) => chain.id === network.chainId && (chain.rpcUrls.default.http as readonly string[]).includes(url!),
      ),
      network.network,
    );
  }
  const base = EVM_NETWORKS.find((n) => n.network === 'base')!;
  const onBase: SessionAddress = { ...devnetUsdc, network: 'base', asset: toRailNetwork(base).assets[1]! };
  const html = renderWalletActions(sessionFixture({ environment: 'live', addresses: [onBase] }), {
    networks: [toRailNetwork(base)],
    devnet: null,
  });
  t.regex(html, /data-chain-id="0x2105"/);
  t.regex(html, /data-rpc-url="https:\/\/mainnet.base.org"/);
  t.regex(html, /data-explorer-tx-url="https:\/\/basescan.org\/tx\/\{hash\}"/);
  t.regex(html, /data-explorer-url="https:\/\/basescan.org"/);
  t.regex(html, /data-native-name="Ether"/);
});
