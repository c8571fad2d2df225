import { evolvePaymentLink } from '../../machines/payment-link.evolve.ts';
import type { PaymentLink, PaymentLinkEvent } from '../../machines/payment-link.types.ts';
import type { ReadDocument } from '../read-store/read-store.ts';
import type { Projection } from './projection.ts';

export type PaymentLinkDoc = ReadDocument & PaymentLink;
export const PAYMENT_LINKS = 'payment_links';

const PREFIX = 'payment_link-';

/** Payment links, one document per link (a deleted one is kept, flagged `deleted`). */
export const paymentLinksProjection: Projection = {
  name: 'payment_links',
  collections: [PAYMENT_LINKS],
  categories: ['payment_link'],
  async apply(event, store) {
    if (!event.streamId.startsWith(PREFIX)) return;
    const links = store.collection<PaymentLinkDoc>(PAYMENT_LINKS);
    const id = event.streamId.slice(PREFIX.length);
    const next = evolvePaymentLink(await links.get(id), event as unknown as PaymentLinkEvent);
    if (next) await links.put({ ...next, _id: id });
  },
};
