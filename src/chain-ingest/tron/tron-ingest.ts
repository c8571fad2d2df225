import type { Rail } from '../rail.ts';
import { KNOWN_TRON_CHAIN_IDS } from './networks.ts';
import type { OpenDeposit } from './reconciler.ts';
import { createTronRail } from './tron-rail.ts';
import { httpEnergyRental } from './energy-rental.ts';
import type { Hex } from 'viem';
import {
  loadTronSetup,
  parseTronEnergyEnv,
  parseTronMaxFeeLimitEnv,
  type OfferedTronNetwork,
  type TronLocalInfo,
} from './tron-setup.ts';

export { KNOWN_TRON_CHAIN_IDS };

/** Everything a Weir process needs for Tron, from its configuration: the networks it offers and the rail. */
export async function createTronIngest(input: {
  env: Readonly<Record<string, string | undefined>>;
  rpcConfigFile?: string;
  local?: TronLocalInfo | null;
  /** The operator's sweeper key (WEIR_SWEEPER_KEY): it sweeps the real Tron networks. */
  sweeperKey?: Hex | null;
  openDeposits?: (network: string) => Promise<OpenDeposit[]>;
  reconcileIntervalMs?: number;
  /** How long a sweep waits for its receipt once sent (WEIR_SWEEP_RECEIPT_TIMEOUT); the executors' defaults unless given. */
  receiptTimeoutMs?: number;
}): Promise<{ offered: OfferedTronNetwork[]; rail: Rail }> {
  const offered = await loadTronSetup(input);
  const energy = parseTronEnergyEnv(input.env);
  const local = input.local;
  return {
    offered,
    rail: createTronRail({
      offered,
      localSweeper: local
        ? { sendUrl: local.sendUrl, key: local.sweeperKey, native: local.nativeSweeps === true }
        : null,
      sweeperKey: input.sweeperKey ?? null,
      maxFeeLimitSun: parseTronMaxFeeLimitEnv(input.env),
      ...(input.receiptTimeoutMs === undefined ? {} : { receiptTimeoutMs: input.receiptTimeoutMs }),
      energy: {
        policy: energy.policy,
        rental: energy.rentalUrl === null ? null : httpEnergyRental(energy.rentalUrl),
      },
      ...(input.openDeposits ? { openDeposits: input.openDeposits } : {}),
      ...(input.reconcileIntervalMs === undefined ? {} : { reconcileIntervalMs: input.reconcileIntervalMs }),
    }),
  };
}
