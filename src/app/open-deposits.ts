import type { OpenDeposit } from '../chain-ingest/balance-reconciler.ts';
import { COLLECTIONS, type CheckoutSessionDoc } from '../projections/collections.ts';
import type { ReadStore } from '../read-store/read-store.ts';

/** Sessions read per query; the reconciler pages through them. */
const PAGE = 500;
/** Sessions still waiting for money: the ones a transfer no follower saw would leave short. */
const OPEN = ['open', 'incomplete'];

/** The same address: an EVM one in any case (the follower's are lowercase, the session's checksummed), any other exactly. */
const sameAddress = (a: string, b: string) => (a.startsWith('0x') ? a.toLowerCase() === b.toLowerCase() : a === b);

/**
 * The balance reconcilers' view of the read models (Tron's, EVM's): every deposit (address and asset) of the open
 * sessions on `network`, with what was credited there (pending or confirmed transfers, each with its
 * block), the last mined sweep of it, and whether a sweep is in flight. A sweep counts as having
 * moved the asset only when recorded with its block and assets (older records are not): a sweep
 * left out makes the credits look larger than the balance, which can hide money, never make it up.
 */
export function openDeposits(readStore: ReadStore): (network: string) => Promise<OpenDeposit[]> {
  return async (network) => {
    const sessions = readStore.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions);
    const filter = { 'addresses.network': network, status: { $in: OPEN } };
    const deposits: OpenDeposit[] = [];
    for (let after: string | null = null, pages = 0; pages < 10_000; pages++) {
      const page: CheckoutSessionDoc[] = await sessions.find(
        after === null ? filter : { ...filter, _id: { $gt: after } },
        {
          sort: { _id: 1 },
          limit: PAGE,
        },
      );
      for (const session of page) {
        // Broadcast and not recorded yet, or dropped for its age and looked up (the node may still mine it).
        const sweeping =
          (session.sweepsBroadcast ?? []).some((b) => b.network === network) ||
          (session.sweepsLookedUp?.length ?? 0) > 0;
        for (const address of session.addresses) {
          if (address.network !== network) continue;
          const credits = session.payments
            .filter(
              (p) =>
                p.status !== 'withdrawn' &&
                p.network === network &&
                sameAddress(p.toAddress, address.paymentAddress) &&
                p.asset.address === address.asset.address,
            )
            .map((p) => ({ amount: BigInt(p.amountRaw), blockNumber: p.blockNumber }));
          const sweeps = session.sweeps
            .flatMap((s) =>
              s.network === network &&
              s.reverted !== true &&
              s.blockNumber !== undefined &&
              s.depositAddress !== undefined &&
              sameAddress(s.depositAddress, address.paymentAddress) &&
              s.assets?.includes(address.asset.address) === true
                ? [{ transactionHash: s.transactionHash, blockNumber: s.blockNumber }]
                : [],
            )
            .sort((a, b) => a.blockNumber - b.blockNumber);
          const lastSweep = sweeps.at(-1) ?? null;
          deposits.push({
            checkoutSessionId: session.id,
            paymentAddress: address.paymentAddress,
            asset: address.asset,
            credits,
            lastSweep,
            sweeps,
            sweeping,
          });
        }
      }
      if (page.length < PAGE) break;
      after = page[page.length - 1]!._id;
    }
    return deposits;
  };
}
