import type { CheckoutSession, SessionAddress } from '../../machines/checkout-session.types.ts';
import { gasFeeChoosing, totalOf } from '../../machines/checkout-session.evolve.ts';
import { explorerTemplateOf } from '../chain-ingest/network-definition.ts';
import type { RailNetwork } from '../chain-ingest/rail.ts';
import { assetUrl } from './assets.ts';
import { owedInChainUnits } from '../shared/money.ts';
import { outstandingExact, sumOfPayments } from '../../machines/checkout-session.received.ts';
import { escapeHtml } from './html.ts';

/** What the wallet actions need besides the session: the networks it can be paid on, and the local devnet if any. */
export type WalletContext = {
  /** The networks of the session's environment (`Rail.networks`). */
  networks: readonly RailNetwork[];
  /** The local devnet Weir runs or follows, whose funded test account the test wallet pays from. */
  devnet: { chainId: number; rpcUrl: string } | null;
  /** The local Tron Weir runs, whose funded test account the test wallet pays from (tron-wallet-actions.ts). */
  tronDevnet?: { chainId: number } | null;
};

/**
 * A public JSON-RPC endpoint per known network, offered to a wallet that does not know the chain
 * yet (`wallet_addEthereumChain`). Never the operator's own endpoints: those may carry API keys.
 * Each is the endpoint viem's chain definition names (wallet-actions.test.ts checks it).
 */
export const PUBLIC_RPC_URLS: Readonly<Record<number, string>> = Object.freeze({
  1: 'https://ethereum.reth.rs/rpc',
  11155111: 'https://11155111.rpc.thirdweb.com',
  137: 'https://polygon.drpc.org',
  80002: 'https://polygon-amoy.drpc.org',
  56: 'https://56.rpc.thirdweb.com',
  97: 'https://data-seed-prebsc-1-s1.bnbchain.org:8545',
  8453: 'https://mainnet.base.org',
  84532: 'https://sepolia.base.org',
  42161: 'https://arb1.arbitrum.io/rpc',
  421614: 'https://sepolia-rollup.arbitrum.io/rpc',
  10: 'https://mainnet.optimism.io',
  11155420: 'https://sepolia.optimism.io',
});

/** Sessions a payer can still pay. */
export const payable = (session: CheckoutSession): boolean =>
  session.status === 'open' || session.status === 'incomplete';

/** Whether the test wallet can pay `address`: a test session, on the local devnet Weir knows. */
export const testWalletPays = (session: CheckoutSession, address: SessionAddress, context: WalletContext): boolean =>
  session.environment === 'test' && context.devnet !== null && address.asset.chainId === context.devnet.chainId;

/**
 * What is still to pay at `address`, in its asset's chain units: the total with the gas fee choosing
 * it makes (its sweep's and those of the addresses paid into; the session's own once chosen) less
 * every payment seen, pending or confirmed, rounded up to the asset's smallest unit so paying it
 * always covers the rest. What the page asks for, after a partial payment too.
 */
export function remainingChainUnits(
  session: CheckoutSession,
  address: Pick<SessionAddress, 'id' | 'asset' | 'gasAmount'>,
): bigint {
  const chosen = session.paymentIntent.paymentMethod?.id === address.id;
  const gasFee = chosen ? session.amountDetails.amountGasFee : gasFeeChoosing(session, address).toString();
  const total = totalOf({ ...session, amountDetails: { ...session.amountDetails, amountGasFee: gasFee } });
  // Summed exactly in chain units: 1 wei short asks for 1 wei, not the 10^-8 the API scale shows.
  const seen = sumOfPayments(session.payments, ['pending', 'confirmed']);
  return owedInChainUnits(outstandingExact(total, seen), address.asset.decimals);
}

/** The chosen payment method and what is left to pay in it, for the page's JSON answers; null when none is chosen or the session is over. */
export function walletDue(
  session: CheckoutSession,
): { addressId: string; assetId: string; amountRemainingRaw: string } | null {
  const method = session.paymentIntent.paymentMethod;
  const address = method && session.addresses.find((a) => a.id === method.id);
  if (!method || !address || !payable(session)) return null;
  return {
    addressId: method.id,
    assetId: method.asset.id,
    amountRemainingRaw: remainingChainUnits(session, address).toString(),
  };
}

/** The explorer's home (`https://etherscan.io`) from its transaction URL template, for wallet_addEthereumChain. */
const explorerHome = (txUrl: string): string => {
  const at = txUrl.indexOf('/tx/');
  return at > 0 ? txUrl.slice(0, at) : '';
};

/** The data attributes wallet.js reads for one deposit address (values escaped here). */
function addressTarget(session: CheckoutSession, address: SessionAddress, context: WalletContext): string {
  const network = context.networks.find((n) => n.chainId === address.asset.chainId && n.kind === 'evm');
  if (!network) return '';
  const isDevnet = context.devnet !== null && network.chainId === context.devnet.chainId;
  const explorer = explorerTemplateOf(network);
  const native = network.assets.find((a) => a.address === 'native');
  const data: Record<string, string> = {
    address: address.id,
    'chain-id': `0x${network.chainId.toString(16)}`,
    'chain-name': network.name,
    'native-name': native?.name ?? network.nativeCurrency.symbol,
    'native-symbol': network.nativeCurrency.symbol,
    'native-decimals': String(network.nativeCurrency.decimals),
    // The devnet's own RPC for a wallet in the same browser; a public one for real networks, when there is one.
    'rpc-url': isDevnet ? context.devnet!.rpcUrl : (PUBLIC_RPC_URLS[network.chainId] ?? ''),
    // A local chain has no explorer (its registry entry is a placeholder): the hash is shown unlinked.
    'explorer-tx-url': explorer ?? '',
    'explorer-url': explorer ? explorerHome(explorer) : '',
    token: address.asset.address === 'native' ? '' : address.asset.address,
    decimals: String(address.asset.decimals),
    symbol: address.asset.symbol,
    to: address.paymentAddress,
    amount: remainingChainUnits(session, address).toString(),
    'test-wallet': String(testWalletPays(session, address, context)),
  };
  const attributes = Object.entries(data)
    .map(([name, value]) => ` data-${name}="${escapeHtml(value)}"`)
    .join('');
  return `<span${attributes}></span>`;
}

/**
 * The wallet actions of the hosted checkout page: "Connect wallet" (an injected EIP-1193 wallet,
 * any environment) and, on a test session with a local devnet, "Pay with test wallet"; with the
 * data assets/wallet.js needs per deposit address, and that script. Nothing once the session is
 * over. The amount in the data is the one at render time: the script reads it fresh before paying.
 * The script is deferred: it reads answers through hosted-fetch.js, which the checkout page loads before checkout.js.
 */
export function renderWalletActions(session: CheckoutSession, context: WalletContext | null): string {
  if (!context || !payable(session)) return '<div id="wallet-actions"></div>';
  const targets = session.addresses.map((a) => addressTarget(session, a, context)).join('');
  if (!targets) return '<div id="wallet-actions"></div>';
  const testWallet = session.addresses.some((a) => testWalletPays(session, a, context));
  return `<div id="wallet-actions" class="wallet-actions" data-session="${escapeHtml(session.id)}">
    <link rel="stylesheet" href="${assetUrl('wallet.css')}">
    <div class="wallet-buttons">
      <button type="button" class="wallet-button" data-wallet-action="connect">Connect wallet</button>
      ${testWallet ? '<button type="button" class="wallet-button" data-wallet-action="test" hidden>Pay with test wallet</button>' : ''}
    </div>
    <div class="wallet-providers" hidden></div>
    <p class="wallet-message" role="status" aria-live="polite"></p>
    <div class="wallet-targets" hidden>${targets}</div>
    <script src="${assetUrl('wallet.js')}" defer></script>
  </div>`;
}
