import type { Hex } from 'viem';
import { KNOWN_EVM_CHAIN_IDS } from '../evm/networks/all-networks.ts';
import type { RpcEndpoints } from '../evm/networks/registry.ts';
import { loadRpcConfig } from '../evm/networks/rpc-config.ts';
import { KNOWN_SOLANA_CHAIN_IDS } from '../solana/networks.ts';
import { tronAddressProblem } from './address.ts';
import { defineTronNetwork, type TronNetwork } from './define-network.ts';
import type { TronEnergyPolicy } from './tron-resources.ts';
import {
  KNOWN_TRON_CHAIN_IDS,
  TRON_LOCAL_CHAIN_ID,
  TRON_NETWORKS,
  tronLocalNetwork,
  type TronLocalTokens,
} from './networks.ts';
import { SettingError } from '../../shared/setting-error.ts';

export const TRON_FACTORY_ENV_PREFIX = 'WEIR_TRON_FACTORY_';
export const TRON_FORWARDER_ENV_PREFIX = 'WEIR_TRON_FORWARDER_';
export const TRON_CONFIRMATIONS_ENV_PREFIX = 'WEIR_CONFIRMATIONS_';
export const TRON_SOLIDITY_RPC_ENV_PREFIX = 'WEIR_TRON_SOLIDITY_RPC_';
export const TRON_ENERGY_SOURCE_ENV = 'WEIR_TRON_ENERGY_SOURCE';
export const TRON_ENERGY_WHEN_SHORT_ENV = 'WEIR_TRON_ENERGY_WHEN_SHORT';
export const TRON_ENERGY_RENTAL_URL_ENV = 'WEIR_TRON_ENERGY_RENTAL_URL';

/** Where Tron sweeps take their energy, and the rental provider's URL with `rented`. */
export type TronEnergySettings = { policy: TronEnergyPolicy; rentalUrl: string | null };

/**
 * `WEIR_TRON_ENERGY_SOURCE` = `burn` (default) | `staked` | `rented`; with `staked`,
 * `WEIR_TRON_ENERGY_WHEN_SHORT` = `burn` (default: funds keep moving) | `wait`; with `rented`,
 * `WEIR_TRON_ENERGY_RENTAL_URL` (http or https), the provider's endpoint.
 */
export function parseTronEnergyEnv(env: Readonly<Record<string, string | undefined>>): TronEnergySettings {
  const source = env[TRON_ENERGY_SOURCE_ENV] || 'burn';
  const whenShort = env[TRON_ENERGY_WHEN_SHORT_ENV] || 'burn';
  const rentalUrl = env[TRON_ENERGY_RENTAL_URL_ENV] || null;
  if (whenShort !== 'burn' && whenShort !== 'wait')
    throw new TronConfigError(`${TRON_ENERGY_WHEN_SHORT_ENV} must be burn or wait, got ${JSON.stringify(whenShort)}`);
  if (env[TRON_ENERGY_WHEN_SHORT_ENV] && source !== 'staked')
    throw new TronConfigError(`${TRON_ENERGY_WHEN_SHORT_ENV} applies to ${TRON_ENERGY_SOURCE_ENV}=staked only`);
  if (rentalUrl !== null && source !== 'rented')
    throw new TronConfigError(`${TRON_ENERGY_RENTAL_URL_ENV} applies to ${TRON_ENERGY_SOURCE_ENV}=rented only`);
  switch (source) {
    case 'burn':
      return { policy: { source }, rentalUrl: null };
    case 'staked':
      return { policy: { source, whenShort }, rentalUrl: null };
    case 'rented': {
      if (rentalUrl === null)
        throw new TronConfigError(
          `${TRON_ENERGY_SOURCE_ENV}=rented needs ${TRON_ENERGY_RENTAL_URL_ENV}, the provider's endpoint`,
        );
      let url: URL;
      try {
        url = new URL(rentalUrl);
      } catch {
        throw new TronConfigError(`${TRON_ENERGY_RENTAL_URL_ENV} is not a URL`);
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:')
        throw new TronConfigError(`${TRON_ENERGY_RENTAL_URL_ENV} must be an http or https URL`);
      return { policy: { source }, rentalUrl };
    }
    default:
      throw new TronConfigError(
        `${TRON_ENERGY_SOURCE_ENV} must be burn, staked or rented, got ${JSON.stringify(source)}`,
      );
  }
}

/** `WEIR_TRON_MAX_FEE_LIMIT_SUN`: the operator's cap on a sweep's fee limit (sun), or null for the executor's default. */
export function parseTronMaxFeeLimitEnv(env: Readonly<Record<string, string | undefined>>): bigint | null {
  const value = env['WEIR_TRON_MAX_FEE_LIMIT_SUN'];
  if (!value) return null;
  if (!/^[1-9][0-9]{0,15}$/.test(value))
    throw new TronConfigError(
      `WEIR_TRON_MAX_FEE_LIMIT_SUN must be a positive whole number of sun, got ${JSON.stringify(value)}`,
    );
  return BigInt(value);
}

/** A setting of the Tron networks that cannot be used; the message names it. */
export class TronConfigError extends SettingError {
  override readonly name = 'TronConfigError';
}

/**
 * How a network derives its deposit addresses. `tvm`: the TVM's CREATE2 (prefix 0x41) from the
 * factory and the implementation it deployed (read from `implementation()` once: the TVM's CREATE
 * does not derive from a nonce). `evm`: the local chain, whose node (anvil) derives with 0xff and
 * from the factory's nonce, as the EVM devnet does.
 */
export type TronDeployment =
  | { create2: 'tvm'; factory: string; implementation: string }
  | { create2: 'evm'; factory: string };

/** A Tron network Weir offers: its definition, where it reads it, and its ForwarderFactory. */
export type OfferedTronNetwork = {
  network: TronNetwork;
  /** The full node's Ethereum-compatible JSON-RPC (`https://<node>/jsonrpc`). */
  endpoints: RpcEndpoints;
  /** A Solidity node's JSON-RPC (`latest` is the latest solidified block), where the reconciler reads balances; else the full node's. */
  solidityRpc?: string;
  deployment: TronDeployment;
};

/** The local Tron a process runs (tests, `weir devnet`): the proxy it reads, the node it sends to, its contracts. */
export type TronLocalInfo = {
  /** The Tron-flavoured JSON-RPC proxy (what a full node's /jsonrpc would answer). */
  rpcUrl: string;
  /** The proxy's Solidity-node view (`latest` is solidified), for the reconciler. */
  solidityRpcUrl?: string;
  /** The EVM node behind it, where the sweeper sends (java-tron's JSON-RPC takes no transactions). */
  sendUrl: string;
  tokens: TronLocalTokens;
  /** The ForwarderFactory, T… form. */
  factory: string;
  /** The account that sends sweeps on the local chain. */
  sweeperKey: Hex;
  /** Sweep as on a real node, through the proxy's `/wallet/…` transaction calls, instead of straight to the EVM node. */
  nativeSweeps?: boolean;
  /** The proxy's finalized depth. */
  confirmations?: number;
};

function checkedTronAddress(name: string, value: string): string {
  const problem = tronAddressProblem(value);
  if (problem !== null) throw new TronConfigError(`${name} ${problem}`);
  return value;
}

/** `WEIR_TRON_FACTORY_<chainId>=T…` and `WEIR_TRON_FORWARDER_<chainId>=T…` (the factory's `implementation()`). */
export function parseTronDeploymentEnv(env: Readonly<Record<string, string | undefined>>): Map<number, TronDeployment> {
  const deployments = new Map<number, TronDeployment>();
  const publicIds = TRON_NETWORKS.map((n) => n.chainId);
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith(TRON_FACTORY_ENV_PREFIX) || !value) continue;
    const suffix = name.slice(TRON_FACTORY_ENV_PREFIX.length);
    const chainId = Number(suffix);
    if (!/^[0-9]+$/.test(suffix) || !publicIds.includes(chainId))
      throw new TronConfigError(`${name}: ${suffix} is not a public Tron chain id (${publicIds.join(', ')})`);
    const forwarderName = `${TRON_FORWARDER_ENV_PREFIX}${suffix}`;
    const forwarder = env[forwarderName];
    if (!forwarder)
      throw new TronConfigError(
        `${forwarderName} must be set beside ${name}: the Forwarder the factory deployed (its implementation()), which the TVM does not let Weir derive`,
      );
    deployments.set(chainId, {
      create2: 'tvm',
      factory: checkedTronAddress(name, value),
      implementation: checkedTronAddress(forwarderName, forwarder),
    });
  }
  return deployments;
}

/** `WEIR_TRON_SOLIDITY_RPC_<chainId>`: a Solidity node's JSON-RPC (java-tron's port 8555, `…/jsonrpc`), when given. */
function solidityEndpoint(env: Readonly<Record<string, string | undefined>>, chainId: number): string | undefined {
  const name = `${TRON_SOLIDITY_RPC_ENV_PREFIX}${chainId}`;
  const value = env[name];
  if (!value) return undefined;
  if (!/^https?:\/\/\S+$/.test(value)) throw new TronConfigError(`${name} must be an http(s) URL, got ${value}`);
  return value;
}

/** The operator's `WEIR_CONFIRMATIONS_<chainId>` for a Tron network, when given. */
function withOperatorConfirmations(
  network: TronNetwork,
  env: Readonly<Record<string, string | undefined>>,
): TronNetwork {
  const name = `${TRON_CONFIRMATIONS_ENV_PREFIX}${network.chainId}`;
  const value = env[name];
  if (!value) return network;
  const depth = Number(value);
  if (!Number.isInteger(depth) || depth < 1 || depth > 10_000)
    throw new TronConfigError(`${name} must be a whole number of blocks from 1 to 10000`);
  return defineTronNetwork({ ...network, confirmations: depth, confirmationsSource: `${name} (operator setting)` });
}

/**
 * The Tron networks this server offers: mainnet and Nile, each when it has an endpoint
 * (`WEIR_RPC_728126428`, `WEIR_RPC_3448148188` or the RPC config file) and a deployed factory
 * (`WEIR_TRON_FACTORY_<chainId>` with `WEIR_TRON_FORWARDER_<chainId>`); plus the local chain
 * (test environment only) when one runs.
 */
export async function loadTronSetup(input: {
  env: Readonly<Record<string, string | undefined>>;
  rpcConfigFile?: string;
  local?: TronLocalInfo | null;
}): Promise<OfferedTronNetwork[]> {
  const rpc = await loadRpcConfig({
    env: input.env,
    configPath: input.rpcConfigFile,
    knownChainIds: [...KNOWN_EVM_CHAIN_IDS, ...KNOWN_SOLANA_CHAIN_IDS, ...KNOWN_TRON_CHAIN_IDS],
  });
  const deployments = parseTronDeploymentEnv(input.env);
  const offered: OfferedTronNetwork[] = [];
  for (const network of TRON_NETWORKS) {
    const endpoints = rpc[network.chainId];
    const deployment = deployments.get(network.chainId);
    const solidityRpc = solidityEndpoint(input.env, network.chainId);
    if (endpoints && endpoints.http.length > 0 && deployment)
      offered.push({
        network: withOperatorConfirmations(network, input.env),
        endpoints,
        ...(solidityRpc ? { solidityRpc } : {}),
        deployment,
      });
  }
  if (input.local) {
    const local = input.local;
    offered.push({
      network: tronLocalNetwork(
        local.tokens,
        local.confirmations === undefined ? {} : { confirmations: local.confirmations },
      ),
      endpoints: rpc[TRON_LOCAL_CHAIN_ID] ?? { http: [local.rpcUrl], ws: [] },
      ...(local.solidityRpcUrl ? { solidityRpc: local.solidityRpcUrl } : {}),
      deployment: { create2: 'evm', factory: checkedTronAddress('the local Tron factory', local.factory) },
    });
  }
  return offered;
}
