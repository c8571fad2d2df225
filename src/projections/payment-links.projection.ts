import { evolvePaymentLink } from '../../machines/payment-link.evolve.ts';
import type { PaymentLink, PaymentLinkEvent } from '../../machines/payment-link.types.ts';
import type { Price, Product } from '../actors/catalog.ts';
import type { ReadDocument, ReadStore } from '../read-store/read-store.ts';
import { PRICES, PRODUCTS, type PriceDoc, type ProductDoc } from './catalog.projection.ts';
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
const PRODUCT_PREFIX = 'product-';
const PRICE_PREFIX = 'price-';

/** A `one_time` link takes one payment: once a session opened from it has completed, it is used up. */
export const usedUp = (link: Pick<PaymentLink, 'type'> & Pick<PaymentLinkUsage, 'completedPayments'>): boolean =>
  link.type === 'one_time' && link.completedPayments > 0;

type Sells = Pick<PaymentLink, 'organizationId' | 'environment' | 'productId' | 'priceId'>;

/**
 * Why the link's product or price can no longer be sold (`product … is deleted`), null when it can.
 * Links made before the catalog refused deleting what they sell may still name such a product.
 */
export function whyNotSold(link: Sells, product: Product | null, price: Price | null): string | null {
  const ours = (doc: { organizationId: string; environment: string }) =>
    doc.organizationId === link.organizationId && doc.environment === link.environment;
  if (!product || product.deleted || !ours(product)) return `product ${link.productId} is deleted`;
  if (!product.isActive) return `product ${product.id} is inactive`;
  if (link.priceId === null) return null;
  if (!price || price.productId !== product.id || !ours(price)) return `price ${link.priceId} does not exist`;
  if (!price.isActive) return `price ${price.id} is inactive`;
  return null;
}

/** `whyNotSold` of the link, from the catalog read model as it stands. */
export async function whyNotSoldIn(store: ReadStore, link: Sells): Promise<string | null> {
  const product = await store.collection<ProductDoc>(PRODUCTS).get(link.productId);
  const price = link.priceId === null ? null : await store.collection<PriceDoc>(PRICES).get(link.priceId);
  return whyNotSold(link, product, price);
}

/**
 * Whether payers may open a new checkout on the link: the merchant has it switched on (a deleted
 * link never is), it is not a used-up one_time link, and its product and price are still offered.
 * Only new sessions are refused: a payer who opened a session before the first payment completed
 * can still pay it (money sent on chain is never refused), so a one_time link may end up with
 * more than one completed payment.
 */
async function linkDoc(
  store: ReadStore,
  id: string,
  link: PaymentLink,
  completedPayments: number,
  completionsCountedThrough: string | null,
): Promise<PaymentLinkDoc> {
  const takesPayments =
    link.isActive && !usedUp({ type: link.type, completedPayments }) && (await whyNotSoldIn(store, link)) === null;
  return { ...link, _id: id, completedPayments, completionsCountedThrough, takesPayments };
}

/** Catalog events that can make a link's product or price stop (or start again) being offered. */
function offeringChanged(event: { type: string; data: unknown }): boolean {
  if (event.type === 'ProductDeleted') return true;
  if (event.type !== 'ProductUpdated' && event.type !== 'PriceUpdated') return false;
  const { changes } = event.data as { changes?: object };
  return changes !== undefined && 'isActive' in changes;
}

/**
 * Payment links, one document per link (a deleted one is kept, flagged `deleted`), with the
 * payments completed through each. A link's own events fold through `evolvePaymentLink` (the
 * write side's function) and keep the count; `CheckoutSessionCompleted` of a session carrying
 * `paymentLinkId` adds one. The session is read from the checkout sessions read model, which is
 * built before this one for each event (ALL_PROJECTIONS' order), and `paymentLinkId` never
 * changes on a session, so a repeated batch finds the same link. A product or price switched on
 * or off, or a product deleted, recomputes `takesPayments` of the links selling it, from the
 * catalog read model (also built before this one).
 */
export const paymentLinksProjection: Projection = {
  name: 'payment_links',
  // 2: takesPayments is false while the link's product or price is deleted or inactive.
  version: 2,
  collections: [PAYMENT_LINKS],
  categories: ['payment_link', 'checkout_session', 'product', 'price'],
  async apply(event, store) {
    const links = store.collection<PaymentLinkDoc>(PAYMENT_LINKS);
    const catalog = event.streamId.startsWith(PRODUCT_PREFIX)
      ? { field: 'productId', id: event.streamId.slice(PRODUCT_PREFIX.length) }
      : event.streamId.startsWith(PRICE_PREFIX)
        ? { field: 'priceId', id: event.streamId.slice(PRICE_PREFIX.length) }
        : null;
    if (catalog) {
      // The catalog read model has this event already (ALL_PROJECTIONS' order): the links selling it follow.
      if (!offeringChanged(event)) return;
      const { organizationId, environment } = event.metadata;
      const selling = await links.find({ organizationId, environment, [catalog.field]: catalog.id, deleted: false });
      for (const link of selling)
        await links.put(await linkDoc(store, link._id, link, link.completedPayments, link.completionsCountedThrough));
      return;
    }
    if (event.streamId.startsWith(PREFIX)) {
      const id = event.streamId.slice(PREFIX.length);
      const stored = await links.get(id);
      // A link is created before any session can carry its id: its creation starts the count at zero.
      const next = evolvePaymentLink(stored, event as unknown as PaymentLinkEvent);
      if (!next) return;
      const created = event.type === 'PaymentLinkCreated';
      await links.put(
        await linkDoc(
          store,
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
    await links.put(await linkDoc(store, link._id, link, link.completedPayments + 1, event.position.toString()));
  },
};
