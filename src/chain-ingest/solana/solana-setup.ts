import { KNOWN_EVM_CHAIN_IDS } from '../evm/networks/all-networks.ts';
import type { RpcEndpoints } from '../evm/networks/registry.ts';
import { loadRpcConfig } from '../evm/networks/rpc-config.ts';
import { KNOWN_TRON_CHAIN_IDS } from '../tron/networks.ts';
import { type Commitment, defineSolanaNetwork, type SolanaNetwork } from './define-network.ts';
import {
  KNOWN_SOLANA_CHAIN_IDS,
  SOLANA_LOCALNET_CHAIN_ID,
  SOLANA_NETWORKS,
  solanaLocalNetwork,
  type SolanaLocalMints,
} from './networks.ts';
import { SettingError } from '../../shared/setting-error.ts';

export const COMMITMENT_ENV_PREFIX = 'WEIR_COMMITMENT_';

/** A setting of the Solana networks that cannot be used; the message names it. */
export class SolanaConfigError extends SettingError {
  override readonly name = 'SolanaConfigError';
}

/**
 * `WEIR_COMMITMENT_<chainId>=SEEN,FINAL` (e.g. `confirmed,finalized`, the default): the operator's
 * own commitment levels for a Solana network, at which a payment is seen and at which it counts.
 */
export function withOperatorCommitment(
  network: SolanaNetwork,
  env: Readonly<Record<string, string | undefined>>,
): SolanaNetwork {
  const name = `${COMMITMENT_ENV_PREFIX}${network.chainId}`;
  const value = env[name];
  if (!value) return network;
  const [seen, final, ...rest] = value.split(',').map((part) => part.trim());
  if (!seen || !final || rest.length > 0)
    throw new SolanaConfigError(`${name} must be two commitment levels, SEEN,FINAL (e.g. confirmed,finalized)`);
  try {
    return defineSolanaNetwork({
      ...network,
      commitment: { seen: seen as Commitment, final: final as Commitment },
      commitmentSource: `${name} (operator setting)`,
    });
  } catch (error) {
    throw new SolanaConfigError(`${name}: ${(error as Error).message}`);
  }
}

/** A Solana network Weir offers, with the endpoints it reads it through. */
export type OfferedSolanaNetwork = { network: SolanaNetwork; endpoints: RpcEndpoints };

/** The local cluster a process runs (`weir devnet`, `npm start`, tests): where it answers and its test mints. */
export type SolanaLocalInfo = { rpcUrl: string; wsUrl?: string; mints: SolanaLocalMints };

/**
 * The Solana networks this server offers: each public cluster with an endpoint in
 * `WEIR_RPC_<chainId>` (1399811149 mainnet-beta, 1399811151 devnet) or the RPC config file, as for
 * the EVM networks, plus the local cluster when one runs. None is offered without an endpoint (the
 * public endpoints are rate-limited and not meant for production).
 */
export async function loadSolanaSetup(input: {
  env: Readonly<Record<string, string | undefined>>;
  rpcConfigFile?: string;
  local?: SolanaLocalInfo | null;
}): Promise<OfferedSolanaNetwork[]> {
  // The same variables and file as the EVM networks: their chain ids are known here too, not read.
  const rpc = await loadRpcConfig({
    env: input.env,
    configPath: input.rpcConfigFile,
    knownChainIds: [...KNOWN_EVM_CHAIN_IDS, ...KNOWN_SOLANA_CHAIN_IDS, ...KNOWN_TRON_CHAIN_IDS],
  });
  const offered: OfferedSolanaNetwork[] = [];
  for (const network of SOLANA_NETWORKS) {
    const endpoints = rpc[network.chainId];
    if (endpoints && endpoints.http.length > 0)
      offered.push({ network: withOperatorCommitment(network, input.env), endpoints });
  }
  const localEndpoints = rpc[SOLANA_LOCALNET_CHAIN_ID];
  if (!input.local && localEndpoints && localEndpoints.http.length > 0) {
    // A `weir devnet` cluster named by WEIR_RPC_1399811148: its test mints are fixed keys, known here.
    // litesvm loads only here, for a `weir devnet` cluster: a server without one never needs it.
    const { localSolanaMints } = await import('./devnet/local-ledger.ts');
    offered.push({ network: solanaLocalNetwork(await localSolanaMints()), endpoints: localEndpoints });
  }
  if (input.local) {
    const configured = rpc[SOLANA_LOCALNET_CHAIN_ID];
    offered.push({
      network: solanaLocalNetwork(input.local.mints, { rpcUrl: input.local.rpcUrl }),
      endpoints:
        configured && configured.http.length > 0
          ? configured
          : { http: [input.local.rpcUrl], ws: input.local.wsUrl ? [input.local.wsUrl] : [] },
    });
  }
  return offered;
}
