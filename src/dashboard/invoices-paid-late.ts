import { withInvoicePaidLate } from '../../machines/checkout-session.late.ts';
import { COLLECTIONS, type CheckoutSessionDoc } from '../projections/collections.ts';
import { INVOICES, type InvoiceDoc } from '../projections/invoices.projection.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import type { DashboardTenant } from './context.ts';

/**
 * `sessions` with the late payments their invoices counted while owed marked as having paid them
 * (`withInvoicePaidLate`), and those invoices by id: the invoice's log says which late money paid it,
 * the session's does not. One query for all, as a list's page reads its customers.
 */
export async function withInvoicesPaidLate(
  readStore: ReadStore,
  tenant: DashboardTenant,
  sessions: readonly CheckoutSessionDoc[],
): Promise<{ sessions: CheckoutSessionDoc[]; invoices: Map<string, InvoiceDoc> }> {
  // Only a session with late money can have paid its invoice late.
  const ids = [
    ...new Set(sessions.filter((s) => s.invoiceId && s.payments.some((p) => p.late)).map((s) => s.invoiceId!)),
  ];
  if (ids.length === 0) return { sessions: [...sessions], invoices: new Map() };
  const found = await readStore
    .collection<InvoiceDoc>(INVOICES)
    .find({ organizationId: tenant.organizationId, environment: tenant.environment, id: { $in: ids } });
  const invoices = new Map(found.map((i) => [i.id, i]));
  return {
    sessions: sessions.map((s) =>
      withInvoicePaidLate(s, (s.invoiceId && invoices.get(s.invoiceId)?.latePaidTransferIds) || []),
    ),
    invoices,
  };
}

/**
 * The latest `limit` sessions (by `updatedAt`) with late money to settle, as `hasLateToSettle` tells it
 * once `withInvoicesPaidLate` has read their invoices: a confirmed late payment that no mark of refunded
 * covers and that its invoice did not count while owed (its `latePaidTransferIds`). Found by the read
 * store (its invoice joined by `$lookup`), so however many late sessions paid their invoices, the older
 * ones still to settle are among those found, and nothing past `limit` is loaded.
 */
export async function latestWithLateToSettle(
  readStore: ReadStore,
  tenant: DashboardTenant,
  limit: number,
): Promise<CheckoutSessionDoc[]> {
  const unsettled = { late: true, status: 'confirmed', coveredByRefundMark: { $ne: true } };
  const found = await readStore.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions).aggregate([
    {
      $match: {
        organizationId: tenant.organizationId,
        environment: tenant.environment,
        status: { $in: ['expired', 'canceled'] },
        payments: { $elemMatch: unsettled },
      },
    },
    { $lookup: { from: INVOICES, localField: 'invoiceId', foreignField: '_id', as: 'paidLate' } },
    // The transfers its invoice counted while owed (none: a session of no invoice, or none counted).
    {
      $set: {
        paidLate: { $ifNull: [{ $arrayElemAt: ['$paidLate.latePaidTransferIds', 0] }, []] },
      },
    },
    {
      $match: {
        $expr: {
          $anyElementTrue: [
            {
              $map: {
                input: '$payments',
                as: 'p',
                in: {
                  $and: [
                    { $eq: ['$$p.late', true] },
                    { $eq: ['$$p.status', 'confirmed'] },
                    { $ne: ['$$p.coveredByRefundMark', true] },
                    { $not: [{ $in: ['$$p.transferId', '$paidLate'] }] },
                  ],
                },
              },
            },
          ],
        },
      },
    },
    { $sort: { updatedAt: -1, _id: 1 } },
    { $limit: limit },
    { $unset: 'paidLate' },
  ]);
  return found as CheckoutSessionDoc[];
}
