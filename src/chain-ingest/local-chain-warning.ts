import type { LocalChainFamily } from '../app/config.ts';
import type { LogFields } from '../shared/logger.ts';
import { HardhatNodeStartError } from './evm/devnet/errors.ts';

const FAMILIES: readonly LocalChainFamily[] = ['evm', 'tron', 'solana'];
/** The local chains that run an anvil: none of them starts without it. */
const NEED_ANVIL: readonly LocalChainFamily[] = ['evm', 'tron'];

/**
 * The line `weir serve` logs when one of its local chains could not start, ending with the
 * WEIR_LOCAL_CHAIN list that leaves it out; without anvil, the list that leaves out both chains needing it.
 */
export function localChainWarning(family: LocalChainFamily, label: string, name: string, error: unknown): string {
  const noAnvil = error instanceof HardhatNodeStartError && error.reason === 'anvil-missing';
  const left = noAnvil ? NEED_ANVIL : [family];
  const list = FAMILIES.filter((f) => !left.includes(f)).join(',');
  const what = noAnvil ? `out the chains that need anvil (${NEED_ANVIL.join(', ')})` : 'it out';
  return `[${label}] could not start, so test keys have no ${name}: ${error instanceof Error ? error.message : String(error)} (WEIR_LOCAL_CHAIN=${list} leaves ${what}, off turns every local chain off)`;
}

/** The fields of that line: operators filter on its event and family. */
export const startFailed = (family: LocalChainFamily): LogFields => ({
  event: 'local_chain.start_failed',
  level: 'warn',
  family,
});
