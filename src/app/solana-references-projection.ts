import type {
  CheckoutSessionEvent,
  CheckoutSessionStatus,
  SessionAddress,
} from '../../machines/checkout-session.types.ts';
import type { SolanaReferences } from '../chain-ingest/solana/follower/solana-references.ts';
import { COLLECTIONS, type CheckoutSessionDoc } from '../projections/collections.ts';
import type { Projection } from '../projections/projection.ts';
import type { ReadStore } from '../read-store/read-store.ts';

const LOAD_PAGE = 5000;

const CLOSING = new Set(['CheckoutSessionCompleted', 'CheckoutSessionExpired', 'CheckoutSessionCanceled']);
/**
 * The statuses those events leave, each with the field its record keeps the closing event's time in
 * (its `at`, the event's occurredAt); an incomplete (partly paid) session still waits for the rest, as an open one.
 */
const CLOSED: Partial<Record<CheckoutSessionStatus, 'completedAt' | 'expiredAt' | 'canceledAt'>> = {
  complete: 'completedAt',
  expired: 'expiredAt',
  canceled: 'canceledAt',
};

/**
 * Keeps `references` current from the log: a session's references on `networks` from its
 * creation, closed when it completes, expires or is canceled (the follower still polls a closed
 * one for a while: late and overpayments are recorded too). `load` reads the sessions a durable
 * read store already holds, as `watchedAddressesProjection` does.
 *
 * A reference is closed at the time the log records (on Weir's clock, which the follower measures
 * the grace period on), never at this start's: a restart gives no closed reference a new grace
 * period, and one that closed past the grace (loaded or replayed at start) is not kept for the
 * first round to drop. `now` (Weir's clock) otherwise only stands in for a record that lacks a time.
 */
export function solanaReferencesProjection(
  references: SolanaReferences,
  networks: readonly string[],
  now: () => number,
): Projection & { load(store: ReadStore): Promise<void> } {
  const solana = new Set(networks);
  const addAll = (addresses: readonly SessionAddress[], expiresAt: string) => {
    const expires = Date.parse(expiresAt);
    for (const address of addresses)
      if (solana.has(address.network)) references.add(address, Number.isNaN(expires) ? null : expires);
  };
  return {
    name: 'solana_references',
    collections: [],
    categories: ['checkout_session'],
    async apply(event) {
      if (event.type === 'CheckoutSessionCreated') {
        const { session } = (event as unknown as CheckoutSessionEvent & { type: 'CheckoutSessionCreated' }).data;
        addAll(session.addresses, session.expiresAt);
      } else if (CLOSING.has(event.type)) {
        const id = event.streamId.slice('checkout_session-'.length);
        references.close(id, closedAtOf(event.metadata.occurredAt, now), now());
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
          addAll(session.addresses, session.expiresAt);
          const closed = CLOSED[session.status];
          if (closed) references.close(session.id, closedAtOf(session[closed], now), now());
        }
        if (page.length < LOAD_PAGE) return;
        after = page[page.length - 1]!._id;
      }
    },
  };
}

/** A recorded closing time in ms; Weir's clock now only for a record without one. */
function closedAtOf(recorded: string | null | undefined, now: () => number): number {
  const at = recorded ? Date.parse(recorded) : Number.NaN;
  return Number.isNaN(at) ? now() : at;
}
