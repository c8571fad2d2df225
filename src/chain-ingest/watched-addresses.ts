import type { CheckoutSessionEvent } from '../../machines/checkout-session.types.ts';
import type { Projection } from '../projections/projection.ts';
import { COLLECTIONS, type DepositAddressDoc } from '../projections/collections.ts';
import type { ReadStore } from '../read-store/read-store.ts';

/** The deposit addresses chain followers watch, per network, in memory (lowercase hex). */
export type WatchedAddresses = {
  has(network: string, address: string): boolean;
  size(network: string): number;
  add(network: string, address: string): void;
};

export function createWatchedAddresses(): WatchedAddresses {
  const byNetwork = new Map<string, Set<string>>();
  return {
    has: (network, address) => byNetwork.get(network)?.has(address.toLowerCase()) ?? false,
    size: (network) => byNetwork.get(network)?.size ?? 0,
    add(network, address) {
      let set = byNetwork.get(network);
      if (!set) {
        set = new Set();
        byNetwork.set(network, set);
      }
      set.add(address.toLowerCase());
    },
  };
}

const LOAD_PAGE = 5000;

/**
 * Keeps a WatchedAddresses set current: every session's addresses are watched from the moment
 * its creation is in the log. Load existing ones from the read store first (a durable read store
 * resumes from a checkpoint, so older sessions never pass through `apply` again).
 */
export function watchedAddressesProjection(
  watched: WatchedAddresses,
): Projection & { load(store: ReadStore): Promise<void> } {
  return {
    name: 'watched_addresses',
    collections: [],
    async apply(event) {
      if (event.type !== 'CheckoutSessionCreated') return;
      const typed = event as unknown as CheckoutSessionEvent & { type: 'CheckoutSessionCreated' };
      for (const address of typed.data.session.addresses) watched.add(address.network, address.paymentAddress);
    },
    async load(store) {
      // In pages by _id: a million sessions' addresses are never all parsed at once.
      const addresses = store.collection<DepositAddressDoc>(COLLECTIONS.depositAddresses);
      for (let after: string | null = null; ; ) {
        const page: DepositAddressDoc[] = await addresses.find(after === null ? {} : { _id: { $gt: after } }, {
          sort: { _id: 1 },
          limit: LOAD_PAGE,
        });
        for (const doc of page) watched.add(doc.network, doc.address);
        if (page.length < LOAD_PAGE) return;
        after = page[page.length - 1]!._id;
      }
    },
  };
}
