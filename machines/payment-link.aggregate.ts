import type { SnapshotFrom } from 'xstate';
import { machineFold, type Aggregate } from '../src/actors/aggregate.ts';
import { decidePaymentLink, type PaymentLinkCommand } from './payment-link.decide.ts';
import { paymentLinkMachine } from './payment-link.machine.ts';
import type { PaymentLinkEvent } from './payment-link.types.ts';

export type PaymentLinkSnapshot = SnapshotFrom<typeof paymentLinkMachine>;

/** A payment link: one stream per link, its statechart as the fold. */
export const paymentLinkAggregate: Aggregate<PaymentLinkSnapshot, PaymentLinkEvent, PaymentLinkCommand> = {
  category: 'payment_link',
  ...machineFold(paymentLinkMachine),
  decide: decidePaymentLink,
};
