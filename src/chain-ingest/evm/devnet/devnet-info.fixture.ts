import type { DevnetAccount, DevnetInfo } from './devnet-info.ts';
import { hardhatAccounts } from './hardhat-accounts.ts';

/** A devnet document for tests: the usual deployment's contracts, a node at `rpcUrl` (none listens on port 1). */
export function devnetInfoFixture(accounts: DevnetAccount[], rpcUrl = 'http://127.0.0.1:1'): DevnetInfo {
  return {
    chainId: 31337,
    rpcUrl,
    wsUrl: rpcUrl.replace(/^http/, 'ws'),
    contracts: {
      forwarderFactory: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
      usdc: '0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512',
      usdt: '0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0',
      dai: '0xCf7Ed3AccA5a467e9e704C703E8D87F634fB0Fc9',
    },
    accounts,
    startedAt: '2026-01-01T00:00:00.000Z',
  };
}

/** Hardhat's account `index` in `role`. */
export const devnetAccountFixture = (index: number, role: DevnetAccount['role']): DevnetAccount => ({
  ...hardhatAccounts[index]!,
  role,
});
