import type { RpcEndpoints } from './rpc-endpoints.ts';
import { rpcValueReader } from './rpc-values.ts';

/** The newest block number of the current endpoint (`eth_blockNumber`). */
export async function getBlockNumber(rpc: RpcEndpoints, parameters: { network: string }): Promise<number> {
  const value = await rpc.request('eth_blockNumber', []);
  return rpcValueReader(parameters.network, 'eth_blockNumber').smallQuantity(value, 'block number');
}

/** The chain id the current endpoint serves (`eth_chainId`). */
export async function getChainId(rpc: RpcEndpoints, parameters: { network: string }): Promise<number> {
  const value = await rpc.request('eth_chainId', []);
  return rpcValueReader(parameters.network, 'eth_chainId').smallQuantity(value, 'chain id');
}
