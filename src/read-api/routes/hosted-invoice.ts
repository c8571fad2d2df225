import Router from '@koa/router';
import { invoiceAggregate } from '../../../machines/invoice.aggregate.ts';
import type { Invoice } from '../../../machines/invoice.types.ts';
import type { CreateCheckoutSession } from '../../actors/create-checkout-session.ts';
import { organizationRecordId } from '../../actors/organization.ts';
import { renderErrorPage } from '../../hosted/error-page.ts';
import { escapeHtml, hostedPage } from '../../hosted/html.ts';
import { COLLECTIONS, type CheckoutSessionDoc, type OrganizationDoc } from '../../projections/collections.ts';
import { INVOICES, type InvoiceDoc } from '../../projections/invoices.projection.ts';
import { WeirError } from '../../shared/errors.ts';
import { isUuid } from '../../shared/ids.ts';
import { formatAmount } from '../../shared/money.ts';
import type { ApiDeps, ApiState } from '../api-context.ts';
import { invoicePayUrl } from '../../hosted/urls.ts';

/** Session refusals that come from the merchant's setup (no payment method for the currency), not the payer. */
const MERCHANT_SETUP_CODES: ReadonlySet<string> = new Set(['payment_method_not_available', 'payment_method_invalid']);

/** A session is reused while it has at least this long to live, so the payer is not rushed. */
const MIN_REMAINING_MS = 10 * 60 * 1000;

function statusPage(invoice: Invoice, org: OrganizationDoc | null, message: string): string {
  const e = escapeHtml;
  return hostedPage({
    title: `Invoice ${invoice.number} · ${org?.name ?? 'Weir merchant'}`,
    kind: 'invoice',
    org,
    business: org?.name ?? 'Weir merchant',
    main: `  <h1>Invoice ${e(invoice.number)}</h1>
  <p id="message">${e(message)}</p>
  <p>Amount: ${e(formatAmount(BigInt(invoice.amountDue)))} ${e(invoice.currency.toUpperCase())}</p>`,
  });
}

/**
 * The public pay link of an invoice, `/invoices/{id}/pay`. For an open (or uncollectible)
 * invoice it reuses the open checkout session of its latest attempt, or opens a new one for the
 * amount remaining and records it as a payment attempt, then redirects the payer there. Other
 * statuses get a small page saying so.
 */
export function hostedInvoiceRoutes(
  deps: ApiDeps & { createCheckoutSession: CreateCheckoutSession },
): Router<ApiState> {
  const router = new Router<ApiState>({ prefix: '/invoices' });
  const invoices = deps.readStore.collection<InvoiceDoc>(INVOICES);
  const sessions = deps.readStore.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions);
  const orgs = deps.readStore.collection<OrganizationDoc>(COLLECTIONS.organizations);

  async function reusableSession(invoice: Invoice): Promise<CheckoutSessionDoc | null> {
    const pending = invoice.paymentAttempts
      .filter((a) => a.status === 'pending')
      .map((a) => a.checkoutSessionId)
      .reverse();
    for (const id of pending) {
      const session = await sessions.get(id);
      if (session && session.status === 'open' && Date.parse(session.expiresAt) - deps.clock.now() > MIN_REMAINING_MS)
        return session;
    }
    return null;
  }

  router.get('/:id/pay', async (ctx) => {
    const id = ctx.params.id!;
    const invoice = isUuid(id) ? await invoices.get(id) : null;
    if (!invoice || invoice.deletedAt !== null || invoice.status === 'draft') {
      // A browser opened it: an HTML page, not the API's JSON error.
      ctx.status = 404;
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = renderErrorPage({
        heading: 'Invoice not found',
        message:
          'This invoice does not exist or is no longer available. Check the link, or contact the business that sent it.',
      });
      return;
    }
    ctx.set('Cache-Control', 'no-store');
    if (invoice.status === 'open' || invoice.status === 'uncollectible') {
      const reuse = await reusableSession(invoice);
      if (reuse) {
        ctx.redirect(reuse.url);
        return;
      }
      const tenant = { organizationId: invoice.organizationId, environment: invoice.environment, actor: 'payer' };
      const opened = await deps
        .createCheckoutSession(
          {
            mode: 'payment',
            successUrl: invoicePayUrl(deps.publicUrl, invoice.id),
            clientReferenceId: invoice.number,
            metadata: { invoiceId: invoice.id, invoiceNumber: invoice.number },
            ...(invoice.paymentMethods.chainIds.length
              ? { paymentSetting: { allowedChains: invoice.paymentMethods.chainIds.map((chainId) => ({ chainId })) } }
              : {}),
            lineItems: {
              data: [
                {
                  quantity: 1,
                  priceData: {
                    currency: invoice.currency,
                    unitAmount: invoice.amountRemaining,
                    productData: { name: `Invoice ${invoice.number}` },
                  },
                },
              ],
            },
          },
          tenant,
          { invoiceId: invoice.id, customerId: invoice.customerId },
        )
        .catch((error: unknown) => {
          // The merchant's setup takes no payment now (no wallet for its currency): the payer did nothing wrong.
          if (error instanceof WeirError && MERCHANT_SETUP_CODES.has(error.code)) return null;
          throw error;
        });
      if (!opened) {
        const org = await orgs.get(organizationRecordId(invoice.organizationId, invoice.environment));
        ctx.status = 409;
        ctx.type = 'text/html; charset=utf-8';
        ctx.body = statusPage(
          invoice,
          org,
          'This invoice cannot be paid online right now: the business has no way set up to take this payment. Please contact them.',
        );
        return;
      }
      const { session, position } = opened;
      if (position !== null) await deps.projections.waitFor(position);
      const result = await deps.commands.handle(
        invoiceAggregate,
        invoice.id,
        { type: 'StartInvoicePaymentAttempt', checkoutSessionId: session.id },
        tenant,
      );
      if (result.position !== null) await deps.projections.waitFor(result.position);
      ctx.redirect(session.url);
      return;
    }
    const org = await orgs.get(organizationRecordId(invoice.organizationId, invoice.environment));
    const message =
      invoice.status === 'paid'
        ? `This invoice was paid on ${(invoice.paidAt ?? '').slice(0, 10)}. Thank you.`
        : 'This invoice was voided and can no longer be paid.';
    ctx.status = invoice.status === 'paid' ? 200 : 410;
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = statusPage(invoice, org, message);
  });

  return router;
}
