import {
  SweepNodeError,
  SweepResourcesShortError,
  SweepRevertedError,
  type SweepTransaction,
} from '../../sweeper/sweep-errors.ts';
import type { SweepExecutor, SweepRequest } from '../../sweeper/sweeper.ts';
import { flushCallData } from '../evm/contracts/flush-forwarders.ts';
import { NATIVE_ASSET_ADDRESS } from '../network-definition.ts';
import { tronToEvm, type TronAddress } from './address.ts';
import type { EnergyRental } from './energy-rental.ts';
import type { TronResourceNode } from './tron-resource-node.ts';
import {
  energyStep,
  estimateSweepEnergy,
  tronBandwidthOf,
  tronSweepFee,
  type TronAccountResources,
  type TronEnergyPolicy,
  type TronResourcePrices,
} from './tron-resources.ts';

/** What a sweep was sent with: the account's resources just before, the prices, where its energy came from. */
type SendContext = {
  available: TronAccountResources;
  prices: TronResourcePrices;
  bandwidth: bigint;
  source: TronEnergyPolicy['source'];
  rentalCost?: bigint;
};

/** Sweep requests (T… addresses) as `ForwarderFactory.flush` takes them (20-byte addresses). */
export const tronFlushRequests = (requests: SweepRequest[]) =>
  requests.map((r) => ({
    merchantAddress: tronToEvm(r.merchantAddress),
    sessionId: r.checkoutSessionId,
    tokens: r.assets.filter((a) => a !== NATIVE_ASSET_ADDRESS).map((a) => tronToEvm(a)),
    native: r.assets.includes(NATIVE_ASSET_ADDRESS),
  }));

const nothingAvailable: TronAccountResources = { energy: 0n, stakedBandwidth: 0n, freeBandwidth: 0n };

/**
 * A Tron network's sweeps with resource accounting, around the executor that sends them (T…
 * addresses in): before sending, the energy the sweep needs (the node's estimate, else one from
 * its shape: about 65k per token into a holder, 131k into a non-holder, plus the forwarder's) is
 * set against the sweeper's available energy by the operator's policy (burn; staked: wait or burn
 * when short; rented: rent the shortfall first); once mined, the TRX burnt for what the account's
 * own energy and bandwidth did not cover is computed and returned as the sweep's `gasCost` (sun)
 * and in `tron`. A flush found mined after a restart is priced with what is known then: the
 * account's resources before it are not, so all of its energy and bandwidth count as burnt (an
 * upper bound). When the executor gives the node's own figures (`tron` on its transaction, from
 * `wallet/gettransactioninfobyid`), those win: the burnt TRX is the node's `fee`.
 */
export function withTronResources(
  executor: SweepExecutor,
  deps: {
    network: string;
    /** The account that sends the sweeps (T…). */
    sweeper: TronAddress;
    /** The ForwarderFactory (T…). */
    factory: string;
    node: TronResourceNode;
    policy: TronEnergyPolicy;
    /** Required with the `rented` policy. */
    rental: EnergyRental | null;
    log: (line: string) => void;
  },
): SweepExecutor {
  const { node, policy, network, sweeper } = deps;
  if (policy.source === 'rented' && deps.rental === null)
    throw new Error(`the Tron energy policy of ${network} is rented, but no rental provider is configured`);
  const factory = tronToEvm(deps.factory);
  /** Sent by this process, by hash, until recorded: how to price it. */
  const contexts = new Map<string, SendContext>();

  const evmRequests = tronFlushRequests;

  async function neededEnergy(requests: SweepRequest[], data: `0x${string}`): Promise<bigint> {
    const estimated = await node.estimateEnergy({ from: tronToEvm(sweeper), to: factory, data });
    if (estimated !== null) return estimated;
    const shapes = await node.shapes(
      evmRequests(requests).map((r, i) => ({
        depositAddress: tronToEvm(requests[i]!.depositAddress),
        merchantAddress: r.merchantAddress,
        tokens: r.tokens,
        native: r.native,
      })),
    );
    return estimateSweepEnergy(shapes);
  }

  /** Reads and decides before a send; throws SweepResourcesShortError to wait. */
  async function prepare(requests: SweepRequest[]): Promise<SendContext> {
    const data = flushCallData(evmRequests(requests));
    const bandwidth = tronBandwidthOf((data.length - 2) / 2);
    try {
      const [needed, before, prices] = await Promise.all([
        neededEnergy(requests, data),
        node.accountResources(sweeper),
        node.prices(),
      ]);
      const step = energyStep(policy, needed, before.energy);
      if (step.action === 'wait')
        throw new SweepResourcesShortError(
          `the sweeper ${sweeper} has ${before.energy} staked energy available on ${network}, the sweep needs about ${needed} ` +
            `(${step.short} short): waiting for it to regenerate (WEIR_TRON_ENERGY_WHEN_SHORT=wait)`,
        );
      if (step.action === 'rent' && deps.rental !== null) {
        const receipt = await deps.rental.rent({ network, receiver: sweeper, energy: step.energy });
        // What the provider delegated is read back: only energy really there is counted as not burnt.
        const after = await node.accountResources(sweeper);
        deps.log(
          `rented ${step.energy} energy for a sweep on ${network} (order ${receipt.orderId}, ${receipt.costSun} sun); the sweeper now has ${after.energy}`,
        );
        return { available: after, prices, bandwidth, source: policy.source, rentalCost: receipt.costSun };
      }
      return { available: before, prices, bandwidth, source: policy.source };
    } catch (error) {
      if (error instanceof SweepNodeError) throw error;
      // Reading the node (or renting) failed before anything was signed: no deposit is to blame.
      throw new SweepNodeError(
        `preparing a sweep's energy on ${network} failed: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
  }

  function priced(transaction: SweepTransaction, context: SendContext): SweepTransaction {
    // The node's own figures (wallet/gettransactioninfobyid, the native executor): its fee is what was burnt.
    const exact = transaction.tron;
    if (exact !== undefined)
      return {
        ...transaction,
        gasCost: exact.trxBurnt,
        tron: {
          ...exact,
          bandwidthUsed: exact.bandwidthUsed > 0n ? exact.bandwidthUsed : context.bandwidth,
          energySource: context.source,
          ...(context.rentalCost === undefined ? {} : { rentalCost: context.rentalCost }),
        },
      };
    const fee = tronSweepFee({
      energyUsed: transaction.gasUsed,
      bandwidthUsed: context.bandwidth,
      available: context.available,
      prices: context.prices,
    });
    return {
      ...transaction,
      gasCost: fee.trxBurnt,
      tron: {
        energyUsed: fee.energyUsed,
        bandwidthUsed: fee.bandwidthUsed,
        trxBurnt: fee.trxBurnt,
        energySource: context.source,
        ...(context.rentalCost === undefined ? {} : { rentalCost: context.rentalCost }),
      },
    };
  }

  return {
    funded: (requests) => executor.funded(requests),
    async flush(requests, beforeSend) {
      const context = await prepare(requests);
      // Kept under the hash signed, which a copy mined in its place (sped up) does not carry.
      let signedHash: string | null = null;
      try {
        const result = await executor.flush(requests, async (signed) => {
          signedHash = signed.transactionHash;
          contexts.set(signed.transactionHash, context);
          await beforeSend(signed);
        });
        if (signedHash !== null) contexts.delete(signedHash);
        return priced(result, context);
      } catch (error) {
        // A revert burns energy too.
        if (error instanceof SweepRevertedError) {
          if (signedHash !== null) contexts.delete(signedHash);
          throw new SweepRevertedError(error.message, priced(error.transaction, context));
        }
        throw error;
      }
    },
    async minedSweep(transactionHash, signedTransaction) {
      const mined = await executor.minedSweep(transactionHash, signedTransaction);
      if (mined === null) return null;
      let context = contexts.get(transactionHash);
      if (context === undefined && mined.transaction.tron !== undefined)
        // The node's exact figures need no prices; the account's resources before it are not known.
        context = {
          available: nothingAvailable,
          prices: { energySun: 0n, bandwidthSun: 0n },
          bandwidth: 0n,
          source: policy.source,
        };
      if (context === undefined) {
        try {
          const bytes = await node.callDataBytes(transactionHash);
          context = {
            available: nothingAvailable,
            prices: await node.prices(),
            bandwidth: bytes === null ? 0n : tronBandwidthOf(bytes),
            source: policy.source,
          };
        } catch (error) {
          throw new SweepNodeError(`pricing sweep ${transactionHash} on ${network} failed`, { cause: error });
        }
      }
      contexts.delete(transactionHash);
      return { ...mined, transaction: priced(mined.transaction, context) };
    },
    async rebroadcast(hash, signed) {
      const state = await executor.rebroadcast(hash, signed);
      // Absent: the sweeper drops it, and it is never looked up again.
      if (state === 'absent') contexts.delete(hash);
      return state;
    },
  };
}
