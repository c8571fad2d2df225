import { keccak256, stringToHex } from 'viem';
import { type AssetRef, RECONCILIATION_TRANSACTION_PREFIX } from '../../machines/checkout-session.types.ts';
import type { ChainTransferMessage } from './chain-messages.ts';
import { createJsonRpc } from './evm/devnet/json-rpc.ts';

/*
 * The balance reconciler, shared by the rails whose deposits hold what they are paid until a sweep
 * (Tron, EVM): money no transfer the follower saw accounts for (a log the node never returned, coin
 * a contract sent on by an internal call) still shows in the deposit's balance. For each deposit of
 * a session still taking money a rail's reader reads the balance and the block it is compared at;
 * this compares it with what the session credited at that address up to that block, counting only
 * what no recorded sweep moved: the credits from the block of the last mined sweep of that asset on
 * (a sweep flushes the whole balance; a credit in the sweep's own block is counted, which can only
 * hide money, never make it up). A deposit whose sweep is in flight (broadcast, its outcome not
 * recorded) is left until it is recorded, and one whose last sweep the balance may not show yet
 * (its block past the one the reader says the balance shows sweeps through).
 *
 * The shortfall is credited as a transfer found by reconciliation: its transaction id reads
 * `reconciliation-…` (no transaction is known; the id is the same for the same balance, so a
 * repeated pass credits nothing new) and its sender `reconciliation`. It is handed to the follower,
 * which owes its `final` (or its withdrawal on a reorg) as for a recovered transfer. Where the
 * reader counts what sweeps flushed, the part of it the balance no longer holds (a recorded sweep
 * flushed it) is credited apart, in the block of the last such sweep: the sweeper then finds it
 * moved by that sweep (mined at or after it), rather than waiting on a deposit read empty.
 *
 * A shortfall is credited only when two passes in a row saw the same balance and credit: the
 * matcher may not yet have recorded a transfer the follower just published. A transfer of the same
 * money recorded later (its block at or before the credit's: a late log, a recovery by hash) is
 * recorded against the credit and not counted again (`TransferAlreadyReconciled`, see the
 * session's decider).
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
  /** Every mined sweep that flushed this asset from the address, oldest first (the last is `lastSweep`). */
  sweeps: readonly { transactionHash: string; blockNumber: number }[];
  /** A sweep from the address is broadcast (or may still be mined) and its outcome not recorded: the balance may move any moment. */
  sweeping: boolean;
};

/** What a rail's reader found: each deposit's balance (in order) and the block they are compared at. */
export type BalanceSnapshot = {
  balances: readonly bigint[];
  /** Every block the balances reflect is at or below it: credits up to it count; a credit is placed in it. */
  block: { number: number; hash: string };
  /** The balances show every sweep mined at or before this block (null: no sweep is known to show). */
  sweepsShownThrough: number | null;
  /**
   * What the deposits' sweeps mined up to `block` took out (as each flushed it, in order), where the
   * reader can tell: then balance plus swept out is all the deposit ever received, compared with
   * every credit, and money that came and was swept before a pass saw it is found too.
   */
  sweptOut?: readonly bigint[];
};

/** Calls the node's JSON-RPC, each call counted. */
export type ReconcilerRpc = (method: string, params: unknown[]) => Promise<unknown>;

/** Reads the balances of `deposits` (none sweeping), or null when there is no block to read them at yet. */
export type BalanceReader = (call: ReconcilerRpc, deposits: readonly OpenDeposit[]) => Promise<BalanceSnapshot | null>;

export type ReconcilerCounters = { passes: number; rpcCalls: number; depositsRead: number; credited: number };

export type BalanceReconciler = { step(): Promise<void>; counters(): ReconcilerCounters };

/**
 * A deposit's shortfall: `held` (its balance, or with `sinceStart` all it ever received) above what
 * was credited over the same span.
 */
export type Shortfall = {
  deposit: OpenDeposit;
  held: bigint;
  credited: bigint;
  sinceStart: boolean;
  /**
   * Of the shortfall, what the deposit's last sweep already flushed (`sinceStart` only): all of it
   * but what the balance still holds beyond the credits after that sweep's block.
   */
  swept: bigint;
};

/** Where money is missing: more held than the session credited since the last sweep the balance shows (or ever). */
export function shortfalls(deposits: readonly OpenDeposit[], snapshot: BalanceSnapshot): Shortfall[] {
  const { block, sweepsShownThrough, sweptOut } = snapshot;
  return deposits.flatMap((deposit, index) => {
    const { lastSweep } = deposit;
    if (lastSweep !== null && (sweepsShownThrough === null || lastSweep.blockNumber > sweepsShownThrough)) return [];
    const sinceStart = sweptOut !== undefined;
    const held = snapshot.balances[index]! + (sweptOut?.[index] ?? 0n);
    const from = sinceStart || lastSweep === null ? 0 : lastSweep.blockNumber;
    const credited = deposit.credits
      .filter((c) => c.blockNumber <= block.number && c.blockNumber >= from)
      .reduce((sum, c) => sum + c.amount, 0n);
    if (held <= credited) return [];
    const missing = held - credited;
    if (!sinceStart || lastSweep === null) return [{ deposit, held, credited, sinceStart, swept: 0n }];
    const creditedSince = deposit.credits
      .filter((c) => c.blockNumber <= block.number && c.blockNumber > lastSweep.blockNumber)
      .reduce((sum, c) => sum + c.amount, 0n);
    const unexplained = snapshot.balances[index]! - creditedSince;
    const inBalance = unexplained <= 0n ? 0n : unexplained < missing ? unexplained : missing;
    return [{ deposit, held, credited, sinceStart, swept: missing - inBalance }];
  });
}

export function createBalanceReconciler(deps: {
  network: string;
  chainId: number;
  /** Where balances are read. */
  rpcUrl: string;
  /** The open deposits to reconcile on this network (from the read models). */
  openDeposits(network: string): Promise<OpenDeposit[]>;
  read: BalanceReader;
  /** Reads block `number` (a sweep's), where a shortfall's swept part is credited; without it, the whole shortfall is credited at the snapshot's block. */
  readBlock?: (call: ReconcilerRpc, number: number) => Promise<BalanceSnapshot['block']>;
  adopt(transfers: readonly ChainTransferMessage[]): Promise<void>;
  now(): Date;
  log(line: string): void;
}): BalanceReconciler {
  const rpc = createJsonRpc(deps.rpcUrl);
  const counters: ReconcilerCounters = { passes: 0, rpcCalls: 0, depositsRead: 0, credited: 0 };
  /** Shortfalls seen by the last pass, by `address asset`: the balance and credit then. */
  let previous = new Map<string, string>();
  const call: ReconcilerRpc = (method, params) => {
    counters.rpcCalls += 1;
    return rpc(method, params);
  };

  const credit = (
    deposit: OpenDeposit,
    seed: string,
    amount: bigint,
    block: BalanceSnapshot['block'],
  ): ChainTransferMessage => {
    const key = `${deposit.paymentAddress} ${deposit.asset.address}`;
    const id = keccak256(stringToHex(`${deps.network}:${key}:${seed}`)).slice(2);
    return {
      type: 'transfer',
      network: deps.network,
      chainId: deps.chainId,
      transactionHash: `${RECONCILIATION_TRANSACTION_PREFIX}${id}`,
      logIndex: -1,
      blockNumber: block.number,
      blockHash: block.hash,
      from: 'reconciliation',
      to: deposit.paymentAddress,
      asset: { address: deposit.asset.address, symbol: deposit.asset.symbol, decimals: deposit.asset.decimals },
      amount: amount.toString(),
      reference: null,
      observedAt: deps.now().toISOString(),
    };
  };

  /** The shortfall's credits: its swept part in the last sweep's block (when that block can be read), the rest in `block`. */
  const credits = async (shortfall: Shortfall, block: BalanceSnapshot['block']): Promise<ChainTransferMessage[]> => {
    const { deposit, held, credited, sinceStart } = shortfall;
    const { lastSweep } = deposit;
    const found: ChainTransferMessage[] = [];
    let swept = 0n;
    if (shortfall.swept > 0n && lastSweep !== null && deps.readBlock) {
      swept = shortfall.swept;
      const at = await deps.readBlock(call, lastSweep.blockNumber);
      found.push(credit(deposit, `${held}:swept:${lastSweep.transactionHash}`, swept, at));
    }
    // After a sweep the same balance may come again: the sweep makes it another credit (all ever received only grows).
    const after = sinceStart || lastSweep === null ? '' : `:${lastSweep.transactionHash}`;
    const rest = held - credited - swept;
    if (rest > 0n) found.push(credit(deposit, `${held}${after}`, rest, block));
    return found;
  };

  return {
    async step() {
      counters.passes += 1;
      try {
        const deposits = (await deps.openDeposits(deps.network)).filter((d) => !d.sweeping);
        const snapshot = deposits.length === 0 ? null : await deps.read(call, deposits);
        if (snapshot === null) {
          previous = new Map();
          return;
        }
        counters.depositsRead += deposits.length;
        const seen = new Map<string, string>();
        const found: ChainTransferMessage[] = [];
        for (const shortfall of shortfalls(deposits, snapshot)) {
          const key = `${shortfall.deposit.paymentAddress} ${shortfall.deposit.asset.address}`;
          const state = `${shortfall.held} ${shortfall.credited}`;
          seen.set(key, state);
          if (previous.get(key) === state) found.push(...(await credits(shortfall, snapshot.block)));
        }
        previous = seen;
        if (found.length > 0) {
          deps.log(
            `reconciliation found ${found.length} payment(s) no transfer showed: ${found.map((f) => `${f.amount} ${f.asset.symbol} to ${f.to}`).join(', ')}`,
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
