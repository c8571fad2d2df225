import { encodeFunctionData, erc20Abi, keccak256, stringToHex } from 'viem';
import { type AssetRef, RECONCILIATION_TRANSACTION_PREFIX } from '../../../machines/checkout-session.types.ts';
import type { ChainTransferMessage } from '../chain-messages.ts';
import { createJsonRpc } from '../evm/devnet/json-rpc.ts';
import { rpcValueReader } from '../evm/follower/rpc-values.ts';
import { NATIVE_ASSET_ADDRESS } from '../network-definition.ts';
import { tronToEvm } from './address.ts';

/*
 * The reconciler: what a Tron node's eth_getLogs never answers (an empty answer that stays
 * empty, so the solidified re-read finds nothing either) still shows in the deposit's balance, as
 * does TRX a contract sent on (an internal transfer, which no log or transaction `value` shows).
 * For each deposit of a session still taking money it reads the balance and compares it with what
 * the session credited at that address up to the block read right after (so every block the
 * balance reflects is at or below it), counting only what no recorded sweep moved: the credits from
 * the block of the last mined sweep of that asset on (a sweep flushes the whole balance; a credit in
 * the sweep's own block is counted, which can only hide money, never make it up). A deposit whose
 * sweep is in flight (broadcast, its outcome not recorded) is left until it is recorded, and one
 * whose last sweep the balance may not show yet (its block past the one read before the balance).
 * Money the logs missed is credited as a
 * transfer found by reconciliation: its transaction id reads `reconciliation-…` (no transaction
 * is known) and its sender `reconciliation`. It is handed to the follower, so it is confirmed
 * (its block is solidified already) and swept like any other.
 *
 * Tron keeps no historical state: its JSON-RPC reads balances at `latest` only. Given a Solidity
 * node's JSON-RPC (`latest` is the latest solidified block) the balance and the block are final;
 * given the full node's, the block is the head and the follower owes the credit's `final` (it is
 * handed over like a recovered transfer).
 *
 * A shortfall is credited only when two passes in a row saw the same balance and credit: the
 * matcher may not yet have recorded a transfer the follower just published. A real log of the
 * same money that arrives later (its block at or before the credit's) is recorded against the
 * credit and not counted again (`TransferAlreadyReconciled`, see the session's decider).
 */

/** An open deposit on the network: the session's address for one asset, what was credited there, what was swept from it. */
export type OpenDeposit = {
  checkoutSessionId: string;
  paymentAddress: string;
  asset: AssetRef;
  /**
   * What was credited at this address in this asset (pending or confirmed), each with its block:
   * a balance read at block B is compared with the credits of blocks up to B only, so money seen
   * after B is not taken for money missing before it.
   */
  credits: readonly { amount: bigint; blockNumber: number }[];
  /** The last mined sweep that flushed this asset from the address: the balance holds only what came from its block on. */
  lastSweep: { transactionHash: string; blockNumber: number } | null;
  /** A sweep from the address is broadcast (or may still be mined) and its outcome not recorded: the balance may move any moment. */
  sweeping: boolean;
};

export type ReconcilerCounters = { passes: number; rpcCalls: number; depositsRead: number; credited: number };

export type TronReconciler = { step(): Promise<void>; counters(): ReconcilerCounters };

export function createTronReconciler(deps: {
  network: string;
  chainId: number;
  /** Where balances are read: a Solidity node's JSON-RPC when there is one, else the full node's. */
  rpcUrl: string;
  /** The open deposits on this network (from the read models). */
  openDeposits(network: string): Promise<OpenDeposit[]>;
  adopt(transfers: readonly ChainTransferMessage[]): Promise<void>;
  now(): Date;
  log(line: string): void;
}): TronReconciler {
  const rpc = createJsonRpc(deps.rpcUrl);
  const counters: ReconcilerCounters = { passes: 0, rpcCalls: 0, depositsRead: 0, credited: 0 };
  /** Shortfalls seen by the last pass, by `address asset`: the balance and credit then. */
  let previous = new Map<string, string>();
  const call = (method: string, params: unknown[]) => {
    counters.rpcCalls += 1;
    return rpc(method, params);
  };

  const balanceOf = async (deposit: OpenDeposit): Promise<bigint> => {
    const read = rpcValueReader(deps.network, 'balance');
    const owner = tronToEvm(deposit.paymentAddress);
    if (deposit.asset.address === NATIVE_ASSET_ADDRESS)
      return read.quantity(await call('eth_getBalance', [owner, 'latest']), 'balance');
    const data = encodeFunctionData({ abi: erc20Abi, functionName: 'balanceOf', args: [owner] });
    const answer = await call('eth_call', [{ to: tronToEvm(deposit.asset.address), data }, 'latest']);
    return read.quantity(answer, 'balanceOf');
  };

  const latest = async (): Promise<{ number: number; hash: string }> => {
    const read = rpcValueReader(deps.network, 'eth_getBlockByNumber');
    const block = read.record(await call('eth_getBlockByNumber', ['latest', false]), 'the latest block');
    return {
      number: read.smallQuantity(block.number, 'latest block number'),
      hash: read.hash(block.hash, 'latest block hash'),
    };
  };

  return {
    async step() {
      counters.passes += 1;
      try {
        const deposits = (await deps.openDeposits(deps.network)).filter((d) => !d.sweeping);
        if (deposits.length === 0) {
          previous = new Map();
          return;
        }
        // A sweep the balance shows is in a block at or before one read before the balance.
        const before = deposits.some((d) => d.lastSweep !== null) ? (await latest()).number : null;
        const balances: bigint[] = [];
        for (const deposit of deposits) {
          counters.depositsRead += 1;
          balances.push(await balanceOf(deposit));
        }
        const { number, hash } = await latest();
        const seen = new Map<string, string>();
        const found: ChainTransferMessage[] = [];
        for (const [index, deposit] of deposits.entries()) {
          const balance = balances[index]!;
          const { lastSweep } = deposit;
          if (lastSweep !== null && (before === null || lastSweep.blockNumber > before)) continue;
          const credited = deposit.credits
            .filter((c) => c.blockNumber <= number && (lastSweep === null || c.blockNumber >= lastSweep.blockNumber))
            .reduce((sum, c) => sum + c.amount, 0n);
          if (balance <= credited) continue;
          const key = `${deposit.paymentAddress} ${deposit.asset.address}`;
          const state = `${balance} ${credited}`;
          seen.set(key, state);
          if (previous.get(key) !== state) continue;
          const missing = balance - credited;
          // After a sweep the same balance may come again: the sweep makes it another credit.
          const after = lastSweep === null ? '' : `:${lastSweep.transactionHash}`;
          const id = keccak256(stringToHex(`${deps.network}:${key}:${balance}${after}`)).slice(2);
          found.push({
            type: 'transfer',
            network: deps.network,
            chainId: deps.chainId,
            transactionHash: `${RECONCILIATION_TRANSACTION_PREFIX}${id}`,
            logIndex: -1,
            blockNumber: number,
            blockHash: hash,
            from: 'reconciliation',
            to: deposit.paymentAddress,
            asset: { address: deposit.asset.address, symbol: deposit.asset.symbol, decimals: deposit.asset.decimals },
            amount: missing.toString(),
            reference: null,
            observedAt: deps.now().toISOString(),
          });
        }
        previous = seen;
        if (found.length > 0) {
          deps.log(
            `reconciliation found ${found.length} payment(s) the logs missed: ${found.map((f) => `${f.amount} ${f.asset.symbol} to ${f.to}`).join(', ')}`,
          );
          await deps.adopt(found);
          counters.credited += found.length;
        }
      } catch (error) {
        deps.log(`reconciliation failed (retried next pass): ${(error as Error).message}`);
      }
    },
    counters: () => ({ ...counters }),
  };
}
