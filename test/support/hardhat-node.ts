import { HardhatNodeStartError } from '../../src/chain-ingest/evm/devnet/errors.ts';
import {
  startHardhatNode as startHardhatNodeOnPort,
  type HardhatNode,
} from '../../src/chain-ingest/evm/devnet/hardhat-node.ts';
import { findFreePort } from './free-port.ts';

export {
  hardhatAccounts,
  hardhatMnemonic,
  hardhatPrivateKey0,
  hardhatPrivateKey1,
  hardhatPrivateKey2,
  hardhatPrivateKey3,
  hardhatPrivateKey4,
  type HardhatAccount,
} from '../../src/chain-ingest/evm/devnet/hardhat-accounts.ts';
export { HardhatNodeStartError } from '../../src/chain-ingest/evm/devnet/errors.ts';
export type { HardhatNode } from '../../src/chain-ingest/evm/devnet/hardhat-node.ts';

const maxStartAttempts = 5;

/**
 * Starts a throw-away hardhat 2 node on 127.0.0.1 and a free port (chain id 31337 unless given,
 * automine, the accounts of {@link hardhatMnemonic} funded with 10 000 ETH each). Resolves once
 * `eth_chainId` answers; retries on another port if the chosen one was taken in the meantime.
 * Always `await node.stop()` (e.g. in `test.after.always`).
 */
export async function startHardhatNode(options: { chainId?: number } = {}): Promise<HardhatNode> {
  const failures: string[] = [];
  for (let attempt = 1; attempt <= maxStartAttempts; attempt++) {
    const port = await findFreePort('127.0.0.1');
    try {
      return await startHardhatNodeOnPort({ ...options, host: '127.0.0.1', port });
    } catch (error) {
      if (!(error instanceof HardhatNodeStartError) || !error.retryable) throw error;
      failures.push(`port ${port}: ${error.message}`);
    }
  }
  throw new Error(`startHardhatNode: no free port after ${maxStartAttempts} attempts:\n${failures.join('\n')}`);
}
