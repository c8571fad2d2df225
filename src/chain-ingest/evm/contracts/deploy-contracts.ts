import { getAddress, type Address, type Hash } from 'viem';
import { forwarderFactoryAbi, testTokenAbi, tetherLikeTokenAbi } from './abis.ts';
import { forwarderFactoryBytecode, testTokenBytecode, tetherLikeTokenBytecode } from './bytecodes.ts';
import type { EvmWriteClients } from './clients.ts';
import { forwarderImplementationAddress } from './deposit-address.ts';
import { ContractDeployError } from './errors.ts';

/** A deployed contract; `address` is EIP-55 checksummed. */
export type DeployedContract = { address: Address; transactionHash: Hash; gasUsed: bigint };

/**
 * Deploys a ForwarderFactory (which deploys its Forwarder implementation) from the wallet
 * client's account and waits for the receipt. `implementation` is read back and checked against
 * the offline derivation, so deposit addresses derived for this factory are right.
 */
export async function deployForwarderFactory(
  clients: EvmWriteClients,
): Promise<DeployedContract & { implementation: Address }> {
  const { publicClient, walletClient } = clients;
  const transactionHash = await walletClient.deployContract({
    abi: forwarderFactoryAbi,
    bytecode: forwarderFactoryBytecode,
    args: [],
  });
  const deployed = await confirmDeployment(clients, 'ForwarderFactory', transactionHash);
  const implementation = await publicClient.readContract({
    address: deployed.address,
    abi: forwarderFactoryAbi,
    functionName: 'implementation',
  });
  const expected = forwarderImplementationAddress(deployed.address);
  if (implementation !== expected) {
    throw new ContractDeployError(
      'ForwarderFactory',
      `its implementation is ${implementation}, but deposit addresses assume ${expected} (CREATE at nonce 1): the artifacts and deposit-address.ts disagree`,
    );
  }
  return { ...deployed, implementation };
}

export type TestTokenParameters = {
  name: string;
  symbol: string;
  decimals: number;
  /** `tether-like`: transfer/transferFrom/approve return nothing, as USDT does. */
  kind?: 'standard' | 'tether-like';
};

/** Deploys a TestToken (or TetherLikeToken) owned by the wallet client's account, which alone may `mint`. */
export async function deployTestToken(
  clients: EvmWriteClients,
  parameters: TestTokenParameters,
): Promise<DeployedContract> {
  const { name, symbol, decimals } = parameters;
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > 255) {
    throw new ContractDeployError(symbol, `decimals must be an integer in 0..255, got ${decimals}`);
  }
  const transactionHash =
    parameters.kind === 'tether-like'
      ? await clients.walletClient.deployContract({
          abi: tetherLikeTokenAbi,
          bytecode: tetherLikeTokenBytecode,
          args: [name, symbol, decimals],
        })
      : await clients.walletClient.deployContract({
          abi: testTokenAbi,
          bytecode: testTokenBytecode,
          args: [name, symbol, decimals],
        });
  return confirmDeployment(
    clients,
    parameters.kind === 'tether-like' ? `TetherLikeToken ${symbol}` : `TestToken ${symbol}`,
    transactionHash,
  );
}

async function confirmDeployment(
  clients: EvmWriteClients,
  contractName: string,
  transactionHash: Hash,
): Promise<DeployedContract> {
  const receipt = await clients.publicClient.waitForTransactionReceipt({ hash: transactionHash });
  if (receipt.status !== 'success')
    throw new ContractDeployError(contractName, `transaction ${transactionHash} reverted`);
  if (!receipt.contractAddress)
    throw new ContractDeployError(contractName, `transaction ${transactionHash} created no contract`);
  return { address: getAddress(receipt.contractAddress), transactionHash, gasUsed: receipt.gasUsed };
}
