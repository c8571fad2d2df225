import { evolvePaymentLink } from '../../machines/payment-link.evolve.ts';
import type { PaymentLink, PaymentLinkEvent } from '../../machines/payment-link.types.ts';
import type { ReadDocument } from '../read-store/read-store.ts';
import { COLLECTIONS, type CheckoutSessionDoc } from './collections.ts';
import type { Projection } from './projection.ts';

/**
 * What the read side knows of a link beyond its own events: the payments taken through it. The
 * reference's PaymentLinkDto has no field for a count of payments, so these stay internal; what
 * the merchant sees of them is `isActive` (see `takesPayments`).
 */
export type PaymentLinkUsage = {
  /** Checkout sessions opened from the link that completed (one `CheckoutSessionCompleted` each). */
  completedPayments: number;
  /**
   * Log position (a decimal string) of the last completion counted, null before the first. A
   * completion at or before it is one the runner repeats after a crash, and is not counted again.
   */
  completionsCountedThrough: string | null;
  /** Whether a payer may open a new checkout session on the link now: see `takesPayments`. */
  takesPayments: boolean;
};

export type PaymentLinkDoc = ReadDocument & PaymentLink & PaymentLinkUsage;
export const PAYMENT_LINKS = 'payment_links';

const PREFIX = 'payment_link-';
const SESSION_PREFIX = 'checkout_session-';

/** A `one_time` link takes one payment: once a session opened from it has completed, it is used up. */
export const usedUp = (link: Pick<PaymentLink, 'type'> & Pick<PaymentLinkUsage, 'completedPayments'>): boolean =>
  link.type === 'one_time' && link.completedPayments > 0;

/**
 * Whether payers may open a new checkout on the link: the merchant has it switched on (a deleted
 * link never is) and it is not a used-up one_time link. Only new sessions are refused: a payer who
 * opened a session before the first payment completed can still pay it (money sent on chain is
 * never refused), so a one_time link may end up with more than one completed payment.
 */
const takesPayments = (link: PaymentLink, completedPayments: number): boolean =>
  link.isActive && !usedUp({ type: link.type, completedPayments });

function linkDoc(
  id: string,
  link: PaymentLink,
  completedPayments: number,
  completionsCountedThrough: string | null,
): PaymentLinkDoc {
  return {
    ...link,
    _id: id,
    completedPayments,
    completionsCountedThrough,
    takesPayments: takesPayments(link, completedPayments),
  };
}

/**
 * Payment links, one document per link (a deleted one is kept, flagged `deleted`), with the
 * payments completed through each. A link's own events fold through `evolvePaymentLink` (the
 * write side's function) and keep the count; `CheckoutSessionCompleted` of a session carrying
 * `paymentLinkId` adds one. The session is read from the checkout sessions read model, which is
 * built before this one for each event (ALL_PROJECTIONS' order), and `paymentLinkId` never
 * changes on a session, so a repeated batch finds the same link.
 */
export const paymentLinksProjection: Projection = {
  name: 'payment_links',
  collections: [PAYMENT_LINKS],
  categories: ['payment_link', 'checkout_session'],
  async apply(event, store) {
    const links = store.collection<PaymentLinkDoc>(PAYMENT_LINKS);
    if (event.streamId.startsWith(PREFIX)) {
      const id = event.streamId.slice(PREFIX.length);
      const stored = await links.get(id);
      // A link is created before any session can carry its id: its creation starts the count at zero.
      const next = evolvePaymentLink(stored, event as unknown as PaymentLinkEvent);
      if (!next) return;
      const created = event.type === 'PaymentLinkCreated';
      await links.put(
        linkDoc(
          id,
          next,
          created ? 0 : (stored?.completedPayments ?? 0),
          created ? null : (stored?.completionsCountedThrough ?? null),
        ),
      );
      return;
    }
    if (event.type !== 'CheckoutSessionCompleted' || !event.streamId.startsWith(SESSION_PREFIX)) return;
    const session = await store
      .collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions)
      .get(event.streamId.slice(SESSION_PREFIX.length));
    const link = session?.paymentLinkId ? await links.get(session.paymentLinkId) : null;
    if (!link) return;
    const counted = link.completionsCountedThrough;
    if (counted !== null && BigInt(counted) >= event.position) return;
    await links.put(linkDoc(link._id, link, link.completedPayments + 1, event.position.toString()));
  },
};
