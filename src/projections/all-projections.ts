import { auditTrailProjection } from './audit-trail.projection.ts';
import { catalogProjection } from './catalog.projection.ts';
import { couponsProjection } from './coupons.projection.ts';
import { customersProjection } from './customers.projection.ts';
import { invoicesProjection } from './invoices.projection.ts';
import { mailsProjection } from './mails.projection.ts';
import { paymentLinksProjection } from './payment-links.projection.ts';
import { checkoutSessionsProjection } from './checkout-sessions.projection.ts';
import { subscriptionsProjection } from './subscriptions.projection.ts';
import { sweepsProjection } from './sweeps.projection.ts';
import { taxRatesProjection } from './tax-rates.projection.ts';
import type { Projection } from './projection.ts';
import { transactionsProjection } from './transactions.projection.ts';
import { tenancyProjection } from './tenancy.projection.ts';
import { teamProjection } from './team.projection.ts';
import { webhooksProjection } from './webhooks.projection.ts';

/** Every read model, in the order they see each event: webhooks last, so payloads are current. */
export const ALL_PROJECTIONS: Projection[] = [
  tenancyProjection,
  teamProjection,
  catalogProjection,
  taxRatesProjection,
  customersProjection,
  couponsProjection,
  checkoutSessionsProjection,
  invoicesProjection,
  subscriptionsProjection,
  paymentLinksProjection,
  sweepsProjection,
  transactionsProjection,
  mailsProjection,
  webhooksProjection,
  auditTrailProjection,
];

/**
 * Fields every read-model collection is indexed on: tenant filters (every list), `status`
 * (pending deliveries for the dispatcher, pending payments for the matcher, list filters) and
 * `subscriptionId` (a subscription's bills, looked up at each renewal), `paymentIntent.id` (a
 * session found by its payment intent, for the payment-intent routes), `pending` (the sweeper's
 * deposits not swept yet, read at each of its turns). The in-memory store keeps equality indexes
 * on them, each built by the first query that filters on it; the SQLite one a key column each;
 * MongoDB a single-field index on each.
 */
export const INDEXED_FIELDS = [
  'organizationId',
  // Every tenant's list filters by it: a count of a tenant's documents is then one SQL count.
  'environment',
  'status',
  'subscriptionId',
  'checkoutSessionId',
  'paymentIntent.id',
  'pending',
] as const;

/**
 * Fields lists are sorted by (API lists by `createdAt`, the timer runner by `fireAt`, the webhook
 * health by `nextAttemptAt`): the SQLite read store keeps each in an indexed column, so a page of
 * a million documents reads its rows in order instead of reading them all.
 */
export const ORDERED_FIELDS = ['createdAt', 'fireAt', 'nextAttemptAt'] as const;

/**
 * How every opener of the read models indexes them (the server, the CLI, benches and tests alike):
 * the SQLite file records its layout and is rebuilt from the log when an opener's differs. The
 * compound index serves what nearly every list asks: a tenant's documents in one environment,
 * often of one status.
 */
export const READ_MODEL_INDEXES = {
  indexedFields: INDEXED_FIELDS,
  orderedFields: ORDERED_FIELDS,
  compoundIndex: ['organizationId', 'environment', 'status'],
} as const;
