import type { AnyStateMachine } from 'xstate';
import { checkoutSessionMachine } from './checkout-session.machine.ts';
import { couponMachine } from './coupon.machine.ts';
import { invoiceMachine } from './invoice.machine.ts';
import { paymentLinkMachine } from './payment-link.machine.ts';
import { subscriptionMachine } from './subscription.machine.ts';
import { webhookDeliveryMachine } from './webhook-delivery.machine.ts';

/** Every statechart, by file name, for `weir machines export` and the inspector. */
export const MACHINES: Record<string, AnyStateMachine> = {
  'checkout-session': checkoutSessionMachine,
  coupon: couponMachine,
  invoice: invoiceMachine,
  'payment-link': paymentLinkMachine,
  subscription: subscriptionMachine,
  'webhook-delivery': webhookDeliveryMachine,
};
