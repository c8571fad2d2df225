import type { Address } from 'viem';
import { falseReturningTokenAbi } from '../../evm/contracts/abis.ts';
import { createEvmWriteClients } from '../../evm/contracts/clients.ts';
import {
  deployForwarderFactory,
  deployTestToken,
  localTronFactoryFlavour,
} from '../../evm/contracts/deploy-contracts.ts';
import { hardhatAccounts } from '../../evm/devnet/hardhat-accounts.ts';

/** What the local Tron adds to the EVM devnet's contracts, in the 20-byte form its node uses. */
export type LocalTronContracts = {
  /** A ForwarderFactory with the Tron forwarder (balance-checked transfers) and the node's 0xff. */
  forwarderFactory: Address;
  /** A USDT whose transfer returns false on success, as Tron mainnet's does. */
  usdt: Address;
};

/**
 * Deploys, with the devnet's deployer account, the local Tron's own factory and USDT on its node
 * (after the EVM devnet's contracts), and mints each of `payers` `perPayer` of the USDT. The
 * EVM devnet's no-return USDT and return-trusting forwarder would not show Tron's difference.
 */
export async function deployLocalTronContracts(
  node: { rpcUrl: string; chainId: number },
  payers: readonly Address[],
  perPayer = 1_000_000n * 10n ** 6n,
): Promise<LocalTronContracts> {
  const deployer = createEvmWriteClients({
    rpcUrl: node.rpcUrl,
    chainId: node.chainId,
    privateKey: hardhatAccounts[0].privateKey,
    pollingIntervalMs: 25,
  });
  const factory = await deployForwarderFactory(deployer, localTronFactoryFlavour);
  const usdt = await deployTestToken(deployer, {
    name: 'Test Tether USD (Tron)',
    symbol: 'USDT',
    decimals: 6,
    kind: 'false-returning',
  });
  for (const payer of payers) {
    const hash = await deployer.walletClient.writeContract({
      address: usdt.address,
      abi: falseReturningTokenAbi,
      functionName: 'mint',
      args: [payer, perPayer],
    });
    await deployer.publicClient.waitForTransactionReceipt({ hash });
  }
  return { forwarderFactory: factory.address, usdt: usdt.address };
}
