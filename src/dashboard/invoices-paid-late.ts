import { withInvoicePaidLate } from '../../machines/checkout-session.late.ts';
import type { CheckoutSessionDoc } from '../projections/collections.ts';
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
