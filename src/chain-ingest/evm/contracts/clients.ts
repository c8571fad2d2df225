import {
  createPublicClient,
  createWalletClient,
  defineChain,
  http,
  type Account,
  type Chain,
  type Hex,
  type PublicClient,
  type Transport,
  type WalletClient,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { localNodeTransport } from '../devnet/local-node-transport.ts';

/** What an operation that sends transactions needs: a reader and a signer on the same chain. */
export type EvmWriteClients = {
  publicClient: PublicClient<Transport, Chain>;
  walletClient: WalletClient<Transport, Chain, Account>;
};

export type CreateEvmWriteClientsParameters = {
  /** JSON-RPC over HTTP, e.g. a devnet's `http://127.0.0.1:<port>`. */
  rpcUrl: string;
  chainId: number;
  privateKey: Hex;
  /** Receipt polling interval; 50 ms unless given (a local automining node answers at once). */
  pollingIntervalMs?: number;
  /**
   * `local` (the default): a node on this machine, through {@link localNodeTransport} (a connection
   * per request, no retries). `remote`: a provider's endpoint, kept-alive connections and up to 3
   * retries with back-off.
   */
  node?: 'local' | 'remote';
};

/** HTTP public and wallet clients for a chain known only by id and URL (a devnet, a test node). */
export function createEvmWriteClients(parameters: CreateEvmWriteClientsParameters): EvmWriteClients {
  const chain = defineChain({
    id: parameters.chainId,
    name: `EVM chain ${parameters.chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [parameters.rpcUrl] } },
  });
  const pollingInterval = parameters.pollingIntervalMs ?? 50;
  const transport =
    parameters.node === 'remote' ? http(parameters.rpcUrl, { retryCount: 3 }) : localNodeTransport(parameters.rpcUrl);
  return {
    publicClient: createPublicClient({ chain, transport, pollingInterval }),
    walletClient: createWalletClient({
      chain,
      transport,
      pollingInterval,
      account: privateKeyToAccount(parameters.privateKey),
    }),
  };
}
