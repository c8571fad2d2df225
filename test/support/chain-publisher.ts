import { randomBytes } from 'node:crypto';
import type { Bus } from '../../src/bus/bus.ts';
import { encodeChainMessage, type ChainMessage } from '../../src/chain-ingest/chain-messages.ts';
import { TEST_NETWORK } from '../../src/chain-ingest/test-rail.ts';

export const randomHash = () => `0x${randomBytes(32).toString('hex')}`;

/** Publishes chain observations exactly as a follower does: same subjects, schema and message ids. */
export function chainPublisher(bus: Bus, network = TEST_NETWORK) {
  const publish = async (message: ChainMessage) => {
    const { subject, data, messageId } = encodeChainMessage(message);
    await bus.publish(subject, data, { messageId });
  };
  const base = { network: network.network, chainId: network.chainId };
  return {
    publish,
    async transfer(input: {
      to: string;
      amount: string;
      asset?: 'usdc' | 'dai' | 'eth';
      blockNumber: number;
      blockHash: string;
      transactionHash?: string;
      logIndex?: number;
    }) {
      const asset = network.assets.find((a) => a.currency === (input.asset ?? 'usdc'))!;
      const message: ChainMessage = {
        type: 'transfer',
        ...base,
        transactionHash: input.transactionHash ?? randomHash(),
        logIndex: input.logIndex ?? 0,
        blockNumber: input.blockNumber,
        blockHash: input.blockHash,
        from: '0x000000000000000000000000000000000000beef',
        to: input.to,
        asset: { address: asset.address, symbol: asset.symbol, decimals: asset.decimals },
        amount: input.amount,
        reference: null,
        observedAt: new Date().toISOString(),
      };
      await publish(message);
      return message;
    },
    final: (blockNumber: number, blockHash: string) =>
      publish({ type: 'final', ...base, blockNumber, blockHash, observedAt: new Date().toISOString() }),
    reorg: (removed: { number: number; hash: string }[]) =>
      publish({ type: 'reorg', ...base, removedBlocks: removed, observedAt: new Date().toISOString() }),
  };
}
