import { getAddress, type Address, type Hash } from 'viem';
import { falseReturningTokenAbi, forwarderFactoryAbi, testTokenAbi, tetherLikeTokenAbi } from './abis.ts';
import {
  falseReturningTokenBytecode,
  forwarderFactoryBytecode,
  testTokenBytecode,
  tetherLikeTokenBytecode,
} from './bytecodes.ts';
import type { EvmWriteClients } from './clients.ts';
import { forwarderImplementationAddress } from './deposit-address.ts';
import { ContractDeployError } from './errors.ts';

/** A deployed contract; `address` is EIP-55 checksummed. */
export type DeployedContract = { address: Address; transactionHash: Hash; gasUsed: bigint };

/**
 * How a factory is built for its chain. `create2Prefix`: what the chain's CREATE2 hashes first,
 * 0xff on the EVM, 0x41 on the TVM. `checksBalanceChange`: the forwarders judge a token transfer
 * by their balance, not its return value (Tron, whose USDT returns false on success).
 */
export type ForwarderFactoryFlavour = { create2Prefix: '0xff' | '0x41'; checksBalanceChange: boolean };

/** The EVM factory: 0xff, return values trusted. Its deposit addresses are the ones Weir always derived. */
export const evmFactoryFlavour: ForwarderFactoryFlavour = { create2Prefix: '0xff', checksBalanceChange: false };

/**
 * The factory for the local Tron: its node is an EVM one, so 0xff, with the Tron forwarder. On
 * real Tron it is `{ create2Prefix: '0x41', checksBalanceChange: true }`, deployed with Tron's own
 * tools (the TVM takes no eth_sendRawTransaction, and its CREATE is not nonce-derived).
 */
export const localTronFactoryFlavour: ForwarderFactoryFlavour = { create2Prefix: '0xff', checksBalanceChange: true };

/**
 * Deploys a ForwarderFactory (which deploys its Forwarder implementation) from the wallet
 * client's account and waits for the receipt. `implementation` is read back and checked against
 * the offline derivation (CREATE at nonce 1, as EVM nodes derive it), so deposit addresses derived
 * for this factory are right.
 */
export async function deployForwarderFactory(
  clients: EvmWriteClients,
  flavour: ForwarderFactoryFlavour = evmFactoryFlavour,
): Promise<DeployedContract & { implementation: Address }> {
  const { publicClient, walletClient } = clients;
  const transactionHash = await walletClient.deployContract({
    abi: forwarderFactoryAbi,
    bytecode: forwarderFactoryBytecode,
    args: [flavour.create2Prefix, flavour.checksBalanceChange],
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
  /**
   * `tether-like`: transfer/transferFrom/approve return nothing, as USDT does on Ethereum.
   * `false-returning`: transfer/transferFrom move the tokens and return false, as USDT does on Tron.
   */
  kind?: 'standard' | 'tether-like' | 'false-returning';
};

const tokenContractName = {
  standard: 'TestToken',
  'tether-like': 'TetherLikeToken',
  'false-returning': 'FalseReturningToken',
};

/** Deploys a TestToken (TetherLikeToken, FalseReturningToken) owned by the wallet client's account, which alone may `mint`. */
export async function deployTestToken(
  clients: EvmWriteClients,
  parameters: TestTokenParameters,
): Promise<DeployedContract> {
  const { name, symbol, decimals } = parameters;
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > 255) {
    throw new ContractDeployError(symbol, `decimals must be an integer in 0..255, got ${decimals}`);
  }
  const kind = parameters.kind ?? 'standard';
  const args = [name, symbol, decimals] as const;
  const { walletClient } = clients;
  const transactionHash =
    kind === 'tether-like'
      ? await walletClient.deployContract({ abi: tetherLikeTokenAbi, bytecode: tetherLikeTokenBytecode, args })
      : kind === 'false-returning'
        ? await walletClient.deployContract({
            abi: falseReturningTokenAbi,
            bytecode: falseReturningTokenBytecode,
            args,
          })
        : await walletClient.deployContract({ abi: testTokenAbi, bytecode: testTokenBytecode, args });
  return confirmDeployment(clients, `${tokenContractName[kind]} ${symbol}`, transactionHash);
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
