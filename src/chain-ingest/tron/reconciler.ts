import { encodeFunctionData, erc20Abi } from 'viem';
import {
  type BalanceReconciler,
  type BalanceSnapshot,
  createBalanceReconciler,
  type OpenDeposit,
  type ReconcilerRpc,
} from '../balance-reconciler.ts';
import type { ChainTransferMessage } from '../chain-messages.ts';
import { rpcValueReader } from '../evm/follower/rpc-values.ts';
import { NATIVE_ASSET_ADDRESS } from '../network-definition.ts';
import { tronToEvm } from './address.ts';

export type { OpenDeposit } from '../balance-reconciler.ts';

/*
 * Tron's balance reconciler (the comparison is balance-reconciler.ts's): what a Tron node's
 * eth_getLogs never answers (an empty answer that stays empty, so the solidified re-read finds
 * nothing either) still shows in the deposit's balance, as does TRX a contract sent on (an internal
 * transfer, which no log or transaction `value` shows).
 *
 * Tron keeps no historical state: its JSON-RPC reads balances at `latest` only. So the balances are
 * compared with the credits up to the block read right after them (every block they reflect is at
 * or below it), and they show a sweep mined at or before the block read right before them. Given a
 * Solidity node's JSON-RPC (`latest` is the latest solidified block) the balance and the block are
 * final; given the full node's, the block is the head and the follower owes the credit's `final`.
 */
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
}): BalanceReconciler {
  const balanceOf = async (call: ReconcilerRpc, deposit: OpenDeposit): Promise<bigint> => {
    const read = rpcValueReader(deps.network, 'balance');
    const owner = tronToEvm(deposit.paymentAddress);
    if (deposit.asset.address === NATIVE_ASSET_ADDRESS)
      return read.quantity(await call('eth_getBalance', [owner, 'latest']), 'balance');
    const data = encodeFunctionData({ abi: erc20Abi, functionName: 'balanceOf', args: [owner] });
    const answer = await call('eth_call', [{ to: tronToEvm(deposit.asset.address), data }, 'latest']);
    return read.quantity(answer, 'balanceOf');
  };

  const latest = async (call: ReconcilerRpc): Promise<{ number: number; hash: string }> => {
    const read = rpcValueReader(deps.network, 'eth_getBlockByNumber');
    const block = read.record(await call('eth_getBlockByNumber', ['latest', false]), 'the latest block');
    return {
      number: read.smallQuantity(block.number, 'latest block number'),
      hash: read.hash(block.hash, 'latest block hash'),
    };
  };

  return createBalanceReconciler({
    ...deps,
    async read(call, deposits): Promise<BalanceSnapshot> {
      // A sweep the balance shows is in a block at or before one read before the balance.
      const before = deposits.some((d) => d.lastSweep !== null) ? (await latest(call)).number : null;
      const balances: bigint[] = [];
      for (const deposit of deposits) balances.push(await balanceOf(call, deposit));
      return { balances, block: await latest(call), sweepsShownThrough: before };
    },
  });
}
