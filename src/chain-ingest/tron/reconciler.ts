import { encodeFunctionData, erc20Abi, keccak256, stringToHex } from 'viem';
import { type AssetRef, RECONCILIATION_TRANSACTION_PREFIX } from '../../../machines/checkout-session.types.ts';
import type { ChainTransferMessage } from '../chain-messages.ts';
import { createJsonRpc } from '../evm/devnet/json-rpc.ts';
import { rpcValueReader } from '../evm/follower/rpc-values.ts';
import { NATIVE_ASSET_ADDRESS } from '../network-definition.ts';
import { tronToEvm } from './address.ts';

/*
 * The reconciler: what a Tron node's eth_getLogs never answers (an empty answer that stays
 * empty, so the solidified re-read finds nothing either) still shows in the deposit's balance.
 * For each open, unswept deposit it reads the balance and compares it with what the session
 * credited at that address up to the block read right after (so every block the balance reflects
 * is at or below it); money the logs missed is credited as a
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

/** An open deposit on the network: the session's address for one asset, what was credited there, whether anything was swept. */
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
  /** A sweep was sent from the address: its balance no longer shows all that arrived. */
  swept: boolean;
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

  return {
    async step() {
      counters.passes += 1;
      try {
        const deposits = (await deps.openDeposits(deps.network)).filter((d) => !d.swept);
        if (deposits.length === 0) {
          previous = new Map();
          return;
        }
        const balances: bigint[] = [];
        for (const deposit of deposits) {
          counters.depositsRead += 1;
          balances.push(await balanceOf(deposit));
        }
        const read = rpcValueReader(deps.network, 'eth_getBlockByNumber');
        const block = read.record(await call('eth_getBlockByNumber', ['latest', false]), 'the latest block');
        const number = read.smallQuantity(block.number, 'latest block number');
        const hash = read.hash(block.hash, 'latest block hash');
        const seen = new Map<string, string>();
        const found: ChainTransferMessage[] = [];
        for (const [index, deposit] of deposits.entries()) {
          const balance = balances[index]!;
          const credited = deposit.credits
            .filter((c) => c.blockNumber <= number)
            .reduce((sum, c) => sum + c.amount, 0n);
          if (balance <= credited) continue;
          const key = `${deposit.paymentAddress} ${deposit.asset.address}`;
          const state = `${balance} ${credited}`;
          seen.set(key, state);
          if (previous.get(key) !== state) continue;
          const missing = balance - credited;
          const id = keccak256(stringToHex(`${deps.network}:${key}:${balance}`)).slice(2);
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
