import { startAnvilNode, type AnvilNode } from '../../evm/devnet/anvil-node.ts';
import { TRON_LOCAL_CHAIN_ID } from '../networks.ts';
import { startTronJsonRpcProxy, type TronJsonRpcProxy } from './json-rpc-proxy.ts';

/** A local Tron: the EVM node that runs the contracts and the Tron-flavoured proxy Weir reads through. */
export type LocalTron = {
  /** Where Weir's Tron rail reads (eth_ JSON-RPC as java-tron answers it). */
  readonly proxy: TronJsonRpcProxy;
  /** Where payers and the sweeper send transactions (anvil, with the same chain id). */
  readonly upstreamUrl: string;
  /** The anvil this started, when no upstream was given. */
  readonly node?: AnvilNode;
  stop(): Promise<void>;
};

/**
 * Starts anvil with the local Tron chain id (so what it signs matches what the proxy answers) and
 * base fee 0 (TRX is its native coin, one wei a sun: gas at gwei prices would cost millions of TRX,
 * so a payer the faucet gave a few TRX sends with gas price 0; Tron's energy is not modelled), and
 * the proxy in front of it; or only the proxy, in front of `upstreamUrl`, whose chain id must then
 * be `TRON_LOCAL_CHAIN_ID` too. `stop` stops what this started.
 */
export async function startLocalTron(
  options: { finalizedDepth?: number; upstreamUrl?: string; port?: number } = {},
): Promise<LocalTron> {
  const node =
    options.upstreamUrl === undefined
      ? await startAnvilNode({ chainId: TRON_LOCAL_CHAIN_ID, zeroFees: true })
      : undefined;
  const upstreamUrl = options.upstreamUrl ?? node?.rpcUrl ?? '';
  let proxy: TronJsonRpcProxy;
  try {
    proxy = await startTronJsonRpcProxy({
      upstreamUrl,
      chainId: TRON_LOCAL_CHAIN_ID,
      ...(options.finalizedDepth === undefined ? {} : { finalizedDepth: options.finalizedDepth }),
      ...(options.port === undefined ? {} : { port: options.port }),
    });
  } catch (error) {
    await node?.stop();
    throw error;
  }
  return {
    proxy,
    upstreamUrl,
    ...(node === undefined ? {} : { node }),
    async stop() {
      await proxy.stop();
      await node?.stop();
    },
  };
}
