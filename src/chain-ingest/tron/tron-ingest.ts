import type { Rail } from '../rail.ts';
import { KNOWN_TRON_CHAIN_IDS } from './networks.ts';
import type { OpenDeposit } from './reconciler.ts';
import { createTronRail } from './tron-rail.ts';
import { httpEnergyRental } from './energy-rental.ts';
import { loadTronSetup, parseTronEnergyEnv, type OfferedTronNetwork, type TronLocalInfo } from './tron-setup.ts';

export { KNOWN_TRON_CHAIN_IDS };

/** Everything a Weir process needs for Tron, from its configuration: the networks it offers and the rail. */
export async function createTronIngest(input: {
  env: Readonly<Record<string, string | undefined>>;
  rpcConfigFile?: string;
  local?: TronLocalInfo | null;
  openDeposits?: (network: string) => Promise<OpenDeposit[]>;
  reconcileIntervalMs?: number;
}): Promise<{ offered: OfferedTronNetwork[]; rail: Rail }> {
  const offered = await loadTronSetup(input);
  const energy = parseTronEnergyEnv(input.env);
  const local = input.local;
  return {
    offered,
    rail: createTronRail({
      offered,
      localSweeper: local ? { sendUrl: local.sendUrl, key: local.sweeperKey } : null,
      energy: {
        policy: energy.policy,
        rental: energy.rentalUrl === null ? null : httpEnergyRental(energy.rentalUrl),
      },
      ...(input.openDeposits ? { openDeposits: input.openDeposits } : {}),
      ...(input.reconcileIntervalMs === undefined ? {} : { reconcileIntervalMs: input.reconcileIntervalMs }),
    }),
  };
}
