import type { z } from '../../../read-api/schema/fields.ts';
import type { SubscriptionSchema } from '../../../read-api/schema/resources.ts';
import type { Tone } from '../../ui/components.tsx';

export type SubscriptionStatus = z.output<typeof SubscriptionSchema>['status'];

/** A subscription's status as the dashboard names it, wherever it is listed (its pages, a customer's). */
export const SUBSCRIPTION_STATUSES: Record<SubscriptionStatus, { label: string; tone: Tone }> = {
  active: { label: 'Active', tone: 'success' },
  trialing: { label: 'Trialing', tone: 'info' },
  incomplete: { label: 'Incomplete', tone: 'warning' },
  past_due: { label: 'Past due', tone: 'danger' },
  unpaid: { label: 'Unpaid', tone: 'danger' },
  paused: { label: 'Paused', tone: 'neutral' },
  canceled: { label: 'Canceled', tone: 'neutral' },
  incomplete_expired: { label: 'Expired', tone: 'neutral' },
};
