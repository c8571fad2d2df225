import type { PaymentLink, PaymentLinkEvent } from './payment-link.types.ts';

/**
 * The one place that computes a payment link's data from its events. The statechart calls it
 * from its action and the projection calls it directly, so the write and read sides cannot drift.
 */
export function evolvePaymentLink(link: PaymentLink | null, event: PaymentLinkEvent): PaymentLink | null {
  if (event.type === 'PaymentLinkCreated') return event.data.link;
  if (link === null) return null;
  switch (event.type) {
    case 'PaymentLinkUpdated':
      return { ...link, ...event.data.changes, updatedAt: event.data.at };
    case 'PaymentLinkActivated':
      return { ...link, isActive: true, updatedAt: event.data.at };
    case 'PaymentLinkDeactivated':
      return { ...link, isActive: false, updatedAt: event.data.at };
    case 'PaymentLinkDeleted':
      return { ...link, isActive: false, deleted: true, deletedAt: event.data.at, updatedAt: event.data.at };
  }
}
