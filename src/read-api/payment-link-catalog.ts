import type { PriceDoc, ProductDoc } from '../projections/catalog.projection.ts';
import { PAYMENT_LINKS, type PaymentLinkDoc, whyNotSoldIn } from '../projections/payment-links.projection.ts';
import type { Filter, ReadStore } from '../read-store/read-store.ts';
import { ConflictError } from '../shared/errors.ts';

/** The payment links a refused product or price change names (the message says how many more). */
const SOLD_BY_NAMED = 10;

/** What a catalog change would take away from a link: a product, or one of its prices. */
export type Sold = { kind: 'product'; doc: ProductDoc } | { kind: 'price'; doc: PriceDoc };

/**
 * The two sides of one rule: an active payment link only sells what is still offered. The catalog
 * asks `refuseWhileSold` before deleting or deactivating; links ask `whyNotSold` before switching on
 * (and the payer's page, for links made before the rule).
 */
export function paymentLinkCatalog(readStore: ReadStore) {
  const links = readStore.collection<PaymentLinkDoc>(PAYMENT_LINKS);

  /**
   * A product or price an active payment link sells is not deleted or deactivated: the link would
   * stay on, and its payers would be refused. Sessions, invoices and subscriptions keep their own
   * copy of the price, so they do not stop it. A 409 `product_in_use` / `price_in_use` names the links.
   */
  async function refuseWhileSold({ kind, doc }: Sold): Promise<void> {
    const selling: Filter = {
      organizationId: doc.organizationId,
      environment: doc.environment,
      [kind === 'product' ? 'productId' : 'priceId']: doc.id,
      deleted: false,
      takesPayments: true,
    };
    const count = await links.count(selling);
    if (count === 0) return;
    const named = await links.find(selling, { sort: { createdAt: -1, _id: 1 }, limit: SOLD_BY_NAMED });
    const more = count > named.length ? ` and ${count - named.length} more` : '';
    throw new ConflictError(
      `${kind} ${doc.id} is sold by active payment links ${named.map((l) => l.id).join(', ')}${more}; deactivate or delete them first`,
      `${kind}_in_use`,
    );
  }

  /** Why the link's product or price can no longer be sold (`product … is deleted`), null when it can. */
  const whyNotSold = (link: PaymentLinkDoc): Promise<string | null> => whyNotSoldIn(readStore, link);

  return { refuseWhileSold, whyNotSold };
}
