import type { ChainTransferMessage } from '../../chain-messages.ts';
import type { RailFollower, RailFollowerContext } from '../../rail.ts';
import type { SolanaNetwork } from '../define-network.ts';
import type { SolanaJsonRpc } from './json-rpc.ts';
import { createSolanaFollower, type SolanaFollower } from './solana-follower.ts';
import type { SolanaReferences } from './solana-references.ts';

/**
 * A Solana follower as the rail interface shows followers (health, the chain-read gate, recovery's
 * adoption): `caughtUpAt` is when (on Weir's clock) the open reference read longest ago was last
 * read (see the follower's onRound), so an expiry waits until every reference was read after it; a slot has no confirmation depth here (`final`
 * is the cluster's `finalized`), so `confirmations` is 1 and `head` stays null.
 */
export function solanaRailFollower(input: {
  network: SolanaNetwork;
  rpc: SolanaJsonRpc;
  endpoint: string;
  references: SolanaReferences;
  context: RailFollowerContext;
  pollIntervalMs: number;
  maxPollIntervalMs?: number;
  /** The network's `ws://`/`wss://` endpoint: references are also subscribed to (`logsSubscribe`). */
  wsUrl?: string;
}): RailFollower & { solana: SolanaFollower } {
  const { context } = input;
  let caughtUpAt: number | null = null;
  let firstRound: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => {
    firstRound = resolve;
  });
  const follower = createSolanaFollower({
    network: input.network,
    rpc: input.rpc,
    bus: context.bus,
    references: input.references,
    pollIntervalMs: input.pollIntervalMs,
    ...(input.maxPollIntervalMs === undefined ? {} : { maxPollIntervalMs: input.maxPollIntervalMs }),
    readClock: () => context.clock.now(),
    onRound: (readThrough) => {
      if (readThrough !== null) caughtUpAt = readThrough;
      firstRound();
      context.onCaughtUp();
    },
    ...(input.wsUrl === undefined ? {} : { wsUrl: input.wsUrl }),
    log: (line, fields) => context.log(`[ingest ${input.network.network}] ${line}`, fields),
    ...(context.tracer ? { tracer: context.tracer } : {}),
    metrics: context.metrics,
  });
  return {
    solana: follower,
    confirmations: 1,
    start: () => follower.start(),
    ready: () => ready,
    async stop() {
      await follower.stop();
      firstRound();
    },
    status() {
      const own = follower.status();
      return {
        network: own.network,
        head: null,
        processed: null,
        pendingFinal: own.pending,
        caughtUpAt,
        endpoint: input.endpoint,
        headSource: own.socket?.connected ? 'websocket' : 'polling',
        lastError: own.lastError,
        running: own.running,
      };
    },
    async adoptTransfers(transfers: readonly ChainTransferMessage[]) {
      for (const transfer of transfers)
        if (transfer.reference !== null)
          follower.adopt(transfer.transactionHash, BigInt(transfer.blockNumber), transfer.reference);
    },
  };
}
