import { mkdir, readFile } from 'node:fs/promises';
import { writeFileAtomically } from '../../shared/write-file-atomically.ts';
import { dirname } from 'node:path';
import { transferId, type ChainTransferMessage } from '../chain-messages.ts';
import { createJsonRpc } from '../evm/devnet/json-rpc.ts';
import type { FollowedToken } from '../evm/follower/extract-transfers.ts';
import { decodeTransferLog, ERC20_TRANSFER_TOPIC } from '../evm/follower/get-transfer-logs.ts';
import { rpcValueReader, toQuantity } from '../evm/follower/rpc-values.ts';
import type { WatchedAddresses } from '../watched-addresses.ts';
import { asTron, tronTransfer } from './tron-address-layer.ts';

/*
 * Tron full nodes are known to answer eth_getLogs with [] for ranges that hold matching logs (and
 * their blocks' logsBloom is all zeros, so the EVM follower's bloom recheck cannot catch it). So
 * once a range is solidified (the tag `finalized`) and deposits are watched, its Transfer logs are
 * asked for again; a transfer to a watched address the follower did not publish is handed to the
 * follower (`adoptTransfers`), which publishes it and owes its `final` like one it saw itself.
 * The cursor is kept in a file, so a restart rechecks from where it stood.
 */

export type SolidifiedLogsCounters = { rereads: number; found: number; errors: number };

export type SolidifiedLogs = {
  /** One pass: rechecks the solidified blocks the follower has processed since the last pass. */
  step(): Promise<void>;
  counters(): SolidifiedLogsCounters;
};

/** Blocks per eth_getLogs request (java-tron refuses more than 5000 by default). */
const MAX_RANGE = 1000;
/** Requests per pass, so one pass after a long stop stays bounded. */
const MAX_REQUESTS_PER_STEP = 20;

export function createSolidifiedLogs(deps: {
  network: string;
  chainId: number;
  rpcUrl: string;
  /** 0x… contracts with their symbols, as the follower follows them. */
  tokens: readonly FollowedToken[];
  watched: WatchedAddresses;
  /** Transfers the follower published, by id, with their block; pruned once their block is rechecked. */
  published: Map<string, number>;
  /** The last block the follower processed; nothing above it is rechecked. */
  processed(): bigint | null;
  adopt(transfers: readonly ChainTransferMessage[]): Promise<void>;
  cursorFile: string;
  now(): Date;
  log(line: string): void;
}): SolidifiedLogs {
  const rpc = createJsonRpc(deps.rpcUrl);
  const counters: SolidifiedLogsCounters = { rereads: 0, found: 0, errors: 0 };
  let next: number | null = null;
  let loaded = false;

  const load = async () => {
    loaded = true;
    try {
      const saved = JSON.parse(await readFile(deps.cursorFile, 'utf8')) as { next?: unknown };
      if (typeof saved.next === 'number' && Number.isSafeInteger(saved.next) && saved.next >= 0) next = saved.next;
    } catch {
      // No cursor yet: start at the solidified block.
    }
  };
  const save = async (value: number) => {
    await mkdir(dirname(deps.cursorFile), { recursive: true });
    await writeFileAtomically(deps.cursorFile, JSON.stringify({ next: value }));
  };

  const solidified = async (): Promise<number> => {
    const block = rpcValueReader(deps.network, 'eth_getBlockByNumber').record(
      await rpc('eth_getBlockByNumber', ['finalized', false]),
      'the finalized block',
    );
    return rpcValueReader(deps.network, 'eth_getBlockByNumber').smallQuantity(block.number, 'finalized block number');
  };

  const recheck = async (from: number, to: number) => {
    counters.rereads += 1;
    const read = rpcValueReader(deps.network, 'eth_getLogs');
    const answer = await rpc('eth_getLogs', [
      {
        address: deps.tokens.map((t) => t.address),
        topics: [ERC20_TRANSFER_TOPIC],
        fromBlock: toQuantity(from),
        toBlock: toQuantity(to),
      },
    ]);
    if (!Array.isArray(answer)) read.fail(`expected an array of logs for blocks ${from}..${to}`);
    const missed: ChainTransferMessage[] = [];
    for (const [position, item] of (answer as unknown[]).entries()) {
      const log = decodeTransferLog(read, item, `log ${position} of blocks ${from}..${to}`);
      if (log === null || !deps.watched.has(deps.network, asTron(log.to))) continue;
      const token = deps.tokens.find((t) => t.address.toLowerCase() === log.token);
      if (!token) continue;
      const message = tronTransfer({
        type: 'transfer',
        network: deps.network,
        chainId: deps.chainId,
        transactionHash: log.transactionHash,
        logIndex: log.logIndex,
        blockNumber: log.blockNumber,
        blockHash: log.blockHash,
        from: log.from,
        to: log.to,
        asset: { address: token.address.toLowerCase(), symbol: token.symbol, decimals: token.decimals },
        amount: log.value.toString(),
        reference: null,
        observedAt: deps.now().toISOString(),
      });
      if (!deps.published.has(transferId(message))) missed.push(message);
    }
    if (missed.length > 0) {
      deps.log(
        `eth_getLogs missed ${missed.length} transfer(s) in blocks ${from}..${to} that the solidified re-read found: ${missed.map(transferId).join(', ')}`,
      );
      await deps.adopt(missed);
      counters.found += missed.length;
    }
  };

  return {
    async step() {
      if (!loaded) await load();
      try {
        const processed = deps.processed();
        if (processed === null) return;
        const solid = Math.min(await solidified(), Number(processed));
        if (next === null) next = solid + 1;
        let requests = 0;
        while (next <= solid && requests < MAX_REQUESTS_PER_STEP) {
          const to = Math.min(solid, next + MAX_RANGE - 1);
          // Nothing watched: no deposit can be in these blocks (a session's address is watched before it is shown).
          if (deps.watched.size(deps.network) > 0) await recheck(next, to);
          requests += 1;
          next = to + 1;
          await save(next);
          for (const [id, block] of deps.published) if (block < next) deps.published.delete(id);
        }
      } catch (error) {
        counters.errors += 1;
        deps.log(`solidified re-read failed (retried next pass): ${(error as Error).message}`);
      }
    },
    counters: () => ({ ...counters }),
  };
}
