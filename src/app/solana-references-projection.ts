import type { CheckoutSessionEvent, SessionAddress } from '../../machines/checkout-session.types.ts';
import type { SolanaReferences } from '../chain-ingest/solana/follower/solana-references.ts';
import { COLLECTIONS, type CheckoutSessionDoc } from '../projections/collections.ts';
import type { Projection } from '../projections/projection.ts';
import type { ReadStore } from '../read-store/read-store.ts';

const LOAD_PAGE = 5000;

const CLOSING = new Set(['CheckoutSessionCompleted', 'CheckoutSessionExpired', 'CheckoutSessionCanceled']);
/** The statuses those events leave: an incomplete (partly paid) session still waits for the rest, as an open one. */
const CLOSED = new Set(['complete', 'expired', 'canceled']);

/**
 * Keeps `references` current from the log: a session's references on `networks` from its
 * creation, closed when it completes, expires or is canceled (the follower still polls a closed
 * one for a while: late and overpayments are recorded too). `load` reads the sessions a durable
 * read store already holds, as `watchedAddressesProjection` does.
 */
export function solanaReferencesProjection(
  references: SolanaReferences,
  networks: readonly string[],
  now: () => number = Date.now,
): Projection & { load(store: ReadStore): Promise<void> } {
  const solana = new Set(networks);
  const addAll = (addresses: readonly SessionAddress[]) => {
    for (const address of addresses) if (solana.has(address.network)) references.add(address);
  };
  return {
    name: 'solana_references',
    collections: [],
    categories: ['checkout_session'],
    async apply(event) {
      if (event.type === 'CheckoutSessionCreated') {
        addAll((event as unknown as CheckoutSessionEvent & { type: 'CheckoutSessionCreated' }).data.session.addresses);
      } else if (CLOSING.has(event.type)) {
        references.close(event.streamId.slice('checkout_session-'.length), now());
      }
    },
    async load(store) {
      if (solana.size === 0) return;
      const sessions = store.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions);
      const filter = { 'addresses.network': { $in: [...solana] } };
      // In pages by _id, as the watched addresses load: a million sessions are never parsed at once.
      for (let after: string | null = null; ; ) {
        const page: CheckoutSessionDoc[] = await sessions.find(
          after === null ? filter : { ...filter, _id: { $gt: after } },
          {
            sort: { _id: 1 },
            limit: LOAD_PAGE,
          },
        );
        for (const session of page) {
          addAll(session.addresses);
          if (CLOSED.has(session.status)) references.close(session.id, now());
        }
        if (page.length < LOAD_PAGE) return;
        after = page[page.length - 1]!._id;
      }
    },
  };
}
