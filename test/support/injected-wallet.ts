import type { Address } from 'viem';

/**
 * An injected wallet: announced by EIP-6963 (no window.ethereum) or, the older way, as window.ethereum; on Ethereum (0x1) and not knowing
 * the devnet, answering with `account`, and forwarding what it signs to the devnet node, where
 * the account is unlocked. `window.walletRejects` makes it refuse to send, as a payer who declines.
 */
export const injectedWallet = (
  account: Address,
  as: 'eip6963' | 'window.ethereum' = 'eip6963',
  rejects = true,
) => `(() => {
  let chainId = '0x1';
  const known = new Set(['0x1']);
  window.walletCalls = [];
  window.walletRejects = ${rejects};
  const fail = (code, message) => Object.assign(new Error(message), { code });
  const provider = {
    async request({ method, params }) {
      window.walletCalls.push({ method, params: params ?? null });
      switch (method) {
        case 'eth_requestAccounts':
        case 'eth_accounts':
          return ['${account}'];
        case 'eth_chainId':
          return chainId;
        case 'wallet_switchEthereumChain':
          if (!known.has(params[0].chainId)) throw fail(4902, 'Unrecognized chain ID');
          chainId = params[0].chainId;
          return null;
        case 'wallet_addEthereumChain':
          known.add(params[0].chainId);
          return null;
        case 'eth_sendTransaction':
          if (window.walletRejects) throw fail(4001, 'User rejected the request.');
          if (params[0].from.toLowerCase() !== '${account.toLowerCase()}') throw fail(4100, 'unknown account');
          return window.weirTestNode(method, params);
        default:
          return window.weirTestNode(method, params ?? []);
      }
    },
  };
  window.walletSwitchTo = (id) => { chainId = id; };
  const info = { uuid: '0b7c1c1e-6a53-4d3c-9d45-5e1f0a9b1c2d', name: 'Test Wallet Extension', icon: 'data:,', rdns: 'example.test-wallet' };
  if ('${as}' === 'window.ethereum') {
    window.ethereum = provider;
    return;
  }
  const announce = () => window.dispatchEvent(new CustomEvent('eip6963:announceProvider', { detail: Object.freeze({ info, provider }) }));
  window.addEventListener('eip6963:requestProvider', announce);
  announce();
})();`;

export type WalletWindow = {
  walletCalls: { method: string; params: unknown }[];
  walletRejects: boolean;
  walletSwitchTo(chainId: string): void;
};
