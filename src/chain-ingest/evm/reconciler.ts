import { toEventSelector, zeroAddress } from 'viem';
import {
  type BalanceReconciler,
  type BalanceSnapshot,
  createBalanceReconciler,
  type OpenDeposit,
  type ReconcilerRpc,
} from '../balance-reconciler.ts';
import type { ChainTransferMessage } from '../chain-messages.ts';
import { NATIVE_ASSET_ADDRESS } from '../network-definition.ts';
import { rpcValueReader, toQuantity } from './follower/rpc-values.ts';

/*
 * The EVM's balance reconciler (the comparison is balance-reconciler.ts's): native coin a contract
 * sends to a deposit address (a Safe, an ERC-4337 account, an exchange's batch payout) is an
 * internal call, which no transaction `value` or log the follower reads shows; it still shows in
 * the deposit's balance. Tokens are not read: their Transfer logs show every payment.
 *
 * The EVM keeps historical state, so each balance is read at the last block the follower has
 * processed (every transfer up to it is published): the balance is exactly what blocks up to it
 * left, compared with the credits of those blocks, and it shows every sweep mined at or before it.
 * The credit is placed in that block, whose `final` (or withdrawal on a reorg) the follower owes.
 *
 * A sweep may flush coin no pass saw yet (it flushes the whole balance): so what each sweep took
 * out is read from its receipt (the forwarder's Flushed log, once per sweep), and balance plus all
 * swept out, all the deposit ever received, is compared with every credit. What of a shortfall
 * the last sweep already flushed is credited in that sweep's block (read for its hash), so the
 * sweeper finds it moved by that sweep; what the balance still holds is credited at the processed block.
 */

/** The Forwarder's `Flushed(token, merchant, amount)`: token 0 is the native coin. */
const FLUSHED = toEventSelector('event Flushed(address indexed token, address indexed merchant, uint256 amount)');
const NATIVE_TOPIC = `0x${zeroAddress.slice(2).padStart(64, '0')}`;
export function createEvmReconciler(deps: {
  network: string;
  chainId: number;
  rpcUrl: string;
  /** The last block the follower has processed; null before the first. */
  processed(): bigint | null;
  /** The open deposits on this network (from the read models). */
  openDeposits(network: string): Promise<OpenDeposit[]>;
  adopt(transfers: readonly ChainTransferMessage[]): Promise<void>;
  now(): Date;
  log(line: string): void;
}): BalanceReconciler {
  /** Native coin each sweep flushed, by `deposit sweep hash`: a mined receipt does not change (a reorg of it, a sweep record withdrawn, is not followed here). */
  const flushed = new Map<string, bigint>();
  const flushedBy = async (
    call: (method: string, params: unknown[]) => Promise<unknown>,
    deposit: string,
    sweep: string,
  ): Promise<bigint> => {
    const key = `${deposit} ${sweep}`;
    const known = flushed.get(key);
    if (known !== undefined) return known;
    const read = rpcValueReader(deps.network, 'eth_getTransactionReceipt');
    const receipt = read.record(await call('eth_getTransactionReceipt', [sweep]), `the receipt of sweep ${sweep}`);
    const logs = Array.isArray(receipt.logs) ? receipt.logs : read.fail(`the receipt of sweep ${sweep} has no logs`);
    let amount = 0n;
    for (const entry of logs) {
      const log = read.record(entry, 'a log');
      const topics = Array.isArray(log.topics) ? log.topics : [];
      if (
        read.address(log.address, 'log address') === deposit &&
        String(topics[0]).toLowerCase() === FLUSHED &&
        String(topics[1]).toLowerCase() === NATIVE_TOPIC
      )
        amount += read.quantity(log.data, 'Flushed amount');
    }
    flushed.set(key, amount);
    return amount;
  };
  const readBlock = async (call: ReconcilerRpc, wanted: bigint) => {
    const read = rpcValueReader(deps.network, 'eth_getBlockByNumber');
    const block = read.record(await call('eth_getBlockByNumber', [toQuantity(wanted), false]), `block ${wanted}`);
    const number = read.smallQuantity(block.number, `block ${wanted} number`);
    if (BigInt(number) !== wanted) read.fail(`asked for block ${wanted}, answered block ${number}`);
    return { number, hash: read.hash(block.hash, `block ${wanted} hash`) };
  };
  return createBalanceReconciler({
    ...deps,
    readBlock: (call, number) => readBlock(call, BigInt(number)),
    // The follower's addresses are lowercase: the credit's `to` is too, so a later transfer of the same money meets it.
    openDeposits: async (network) =>
      (await deps.openDeposits(network))
        .filter((d) => d.asset.address === NATIVE_ASSET_ADDRESS)
        .map((d) => ({ ...d, paymentAddress: d.paymentAddress.toLowerCase() })),
    async read(call, deposits): Promise<BalanceSnapshot | null> {
      const processed = deps.processed();
      if (processed === null) return null;
      const at = toQuantity(processed);
      const { number, hash } = await readBlock(call, processed);
      const read = rpcValueReader(deps.network, 'eth_getBalance');
      const balances: bigint[] = [];
      const sweptOut: bigint[] = [];
      for (const deposit of deposits) {
        balances.push(read.quantity(await call('eth_getBalance', [deposit.paymentAddress, at]), 'balance'));
        let out = 0n;
        for (const sweep of deposit.sweeps)
          if (sweep.blockNumber <= number) out += await flushedBy(call, deposit.paymentAddress, sweep.transactionHash);
        sweptOut.push(out);
      }
      return { balances, block: { number, hash }, sweepsShownThrough: number, sweptOut };
    },
  });
}
