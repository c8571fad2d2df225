import { deriveDepositAddress } from '../../src/chain-ingest/evm/contracts/deposit-address.ts';
import type { Rail } from '../../src/chain-ingest/rail.ts';
import { createTestRail } from '../../src/chain-ingest/test-rail.ts';

/** Where the first contract of hardhat's first account lands: any factory address derives the same way. */
const FACTORY = '0x5FbDB2315678afecb367f032d93F642f64180aa3';

/**
 * The test network with the deposit addresses of every EVM network: the CREATE2 forwarder a
 * factory deploys for (merchant wallet, session), derived by the EVM rail's own code. So a wallet
 * no forwarder can be bound to fails here as it does on a real chain, with no chain to run.
 */
export function evmDerivedTestRail(): Rail {
  return {
    ...createTestRail(),
    name: 'test-evm-derived',
    depositAddress: ({ checkoutSessionId, merchantAddress }) =>
      deriveDepositAddress({ factoryAddress: FACTORY, merchantAddress, sessionId: checkoutSessionId }),
  };
}
