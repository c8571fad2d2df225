import { createHash } from 'node:crypto';
import Router from '@koa/router';
import type Koa from 'koa';
import { invoiceAggregate } from '../../../machines/invoice.aggregate.ts';
import type { Invoice } from '../../../machines/invoice.types.ts';
import type { CreateCheckoutSession } from '../../actors/create-checkout-session.ts';
import { organizationRecordId } from '../../actors/organization.ts';
import { answerNotFoundPage } from '../../hosted/error-page.ts';
import { INVOICE_NOTICES } from '../../hosted/page-notices.ts';
import { type InvoiceDocument, invoiceDocument } from '../../hosted/invoice-document.ts';
import { renderInvoicePage } from '../../hosted/invoice-page.ts';
import { renderInvoicePdf } from '../../hosted/invoice-pdf.ts';
import { CUSTOMERS, type CustomerDoc } from '../../projections/customers.projection.ts';
import { PRICES, PRODUCTS, type PriceDoc, type ProductDoc } from '../../projections/catalog.projection.ts';
import { COLLECTIONS, type CheckoutSessionDoc, type OrganizationDoc } from '../../projections/collections.ts';
import { INVOICES, type InvoiceDoc } from '../../projections/invoices.projection.ts';
import { isUuid } from '../../shared/ids.ts';
import type { ReadStore } from '../../read-store/read-store.ts';
import type { ApiContext, ApiDeps, ApiState } from '../api-context.ts';
import type { UnexpectedErrorLog } from '../middleware.ts';
import { recordErrorPages } from './hosted-error-pages.ts';
import { isMerchantSetupRefusal } from '../merchant-setup.ts';
import { CheckoutSessionCreate } from '../schema/checkout-session-create.ts';
import { parseWith } from '../schema/route.ts';
import { invoicePageUrl, invoicePayUrl } from '../../hosted/urls.ts';
import { recordOf } from '../../projections/record-document.ts';
import { idParams } from '../schema/fields.ts';
import { limitedPage, unavailablePage } from '../schema/hosted.ts';
import { type PageAnswer, schemaRoutes } from '../schema/route.ts';
import { isTenants, type TenantOf } from '../../tenancy/same-tenant.ts';

/** A session is reused while it has at least this long to live, so the payer is not rushed. */
const MIN_REMAINING_MS = 10 * 60 * 1000;

/** What the checkout page says the payment is for: the invoice's subject, or its lines, and what part is left. */
function checkoutDescription(invoice: Invoice): string {
  const names = invoice.lineItems.data.map((line) => line.description ?? 'Item');
  const about =
    invoice.description ??
    (names.length > 3 ? `${names.slice(0, 3).join(', ')} and ${names.length - 3} more` : names.join(', '));
  const part = BigInt(invoice.amountPaid) > 0n ? 'The amount remaining on this invoice. ' : '';
  return `${part}${about}`.slice(0, 2000);
}

/**
 * The payment setting of the session that pays the invoice: its networks (none sent: every one with a
 * payment method) and its preferred one (none sent: the organization's).
 */
function paymentSettingOf(invoice: Invoice) {
  const { chainIds } = invoice.paymentMethods;
  const preferredChainId = invoice.preferredChainId;
  if (chainIds.length === 0 && preferredChainId === undefined) return {};
  return {
    paymentSetting: {
      ...(chainIds.length > 0 ? { allowedChains: chainIds.map((chainId) => ({ chainId })) } : {}),
      ...(preferredChainId === undefined ? {} : { preferredChainId }),
    },
  };
}

/** Whether a payer may see the invoice: finalized once (not a draft) and not deleted. */
const isPublic = (doc: InvoiceDoc): boolean => doc.deletedAt === null && doc.status !== 'draft';

/** Rendered PDFs kept, newest last: drawing one takes tens of milliseconds, asking again for it takes none. */
const PDF_CACHE_SIZE = 64;

/** Where the payer downloads an invoice. */
const invoicePdfPath = (invoiceId: string): string => `/invoices/${invoiceId}/pdf`;

/**
 * Around every `/invoices/` route (all of them pages a browser opens, the PDF included): a passing
 * refusal or an unexpected error is a page in the invoice's frame with a way back to it
 * (hosted-error-pages.ts). Only an invoice a payer may see lends its frame.
 */
export function invoiceErrorPages(readStore: ReadStore, logUnexpected: UnexpectedErrorLog): Koa.Middleware<ApiState> {
  const invoices = readStore.collection<InvoiceDoc>(INVOICES);
  return recordErrorPages(readStore, logUnexpected, {
    find: async (id) => {
      const invoice = isUuid(id) ? await invoices.get(id) : null;
      return invoice && isPublic(invoice) ? invoice : null;
    },
    back: (id) => ({ href: `/invoices/${id}`, words: 'Back to the invoice' }),
    notices: INVOICE_NOTICES,
  });
}

/**
 * The public pages of an invoice. `/invoices/{id}`: the invoice as a document, with the pay action
 * while something is due; `/invoices/{id}/pdf`: the same document as a PDF download;
 * `/invoices/{id}/pay`: the pay link. For an open (or uncollectible) invoice the pay link reuses
 * the open checkout session of its latest attempt, or opens a new one for the amount remaining and
 * records it as a payment attempt, then redirects the payer there; otherwise (paid, void, or no way
 * to pay set up) it shows the document saying so. Drafts and deleted invoices are not found.
 */
export function hostedInvoiceRoutes(
  deps: ApiDeps & { createCheckoutSession: CreateCheckoutSession },
): Router<ApiState> {
  const router = new Router<ApiState>({ prefix: '/invoices' });
  const invoices = deps.readStore.collection<InvoiceDoc>(INVOICES);
  const sessions = deps.readStore.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions);
  const orgs = deps.readStore.collection<OrganizationDoc>(COLLECTIONS.organizations);
  const customers = deps.readStore.collection<CustomerDoc>(CUSTOMERS);
  const prices = deps.readStore.collection<PriceDoc>(PRICES);
  const products = deps.readStore.collection<ProductDoc>(PRODUCTS);

  /**
   * The invoice a payer may see (finalized once, not a draft, not deleted); otherwise, as every route
   * here is a page a browser opens (the PDF too), answers with the not-found page, not the API's JSON, and gives null.
   */
  async function pageInvoice(ctx: ApiContext, id: string): Promise<Invoice | null> {
    const doc = isUuid(id) ? await invoices.get(id) : null;
    if (doc && isPublic(doc)) return recordOf<Invoice>(doc);
    answerNotFoundPage(ctx, {
      heading: 'Invoice not found',
      message:
        'This invoice does not exist or is no longer available. Check the link, or contact the business that sent it.',
    });
    return null;
  }

  /** Everything the document shows beyond the invoice: its organization, customer and products, of its own tenant only. */
  async function documentOf(invoice: Invoice) {
    const ownsIt = <T extends TenantOf>(record: T | null): record is T => isTenants(record, invoice);
    const org = await orgs.get(organizationRecordId(invoice.organizationId, invoice.environment));
    const customer = await customers.get(invoice.customerId);
    const productDetails = new Map<string, string>();
    for (const line of invoice.lineItems.data) {
      if (!line.priceId || productDetails.has(line.priceId)) continue;
      const price = await prices.get(line.priceId);
      const product = ownsIt(price) ? await products.get(price.productId) : null;
      if (ownsIt(product) && product.description) productDetails.set(line.priceId, product.description);
    }
    const document = invoiceDocument({
      invoice,
      organization: org,
      customer: ownsIt(customer) ? customer : null,
      productDetails,
      nowMs: deps.clock.now(),
    });
    return { org, document };
  }

  async function sendPage(
    ctx: { status: number; type: string; body: unknown },
    invoice: Invoice,
    status: number,
    notice: string | null = null,
  ) {
    const { org, document } = await documentOf(invoice);
    ctx.status = status;
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = renderInvoicePage(
      document,
      org,
      {
        pay: invoicePayUrl('', invoice.id),
        pdf: invoicePdfPath(invoice.id),
        payOnline: invoicePayUrl(deps.publicUrl, invoice.id),
      },
      notice,
      { testMode: invoice.environment === 'test' },
    );
  }

  // Keyed by everything the PDF is drawn from, so a changed invoice, business or status is drawn anew.
  const pdfCache = new Map<string, Buffer>();
  async function invoicePdf(invoice: Invoice, document: InvoiceDocument): Promise<Buffer> {
    const payUrl = invoicePayUrl(deps.publicUrl, invoice.id);
    const createdAt = invoice.finalizedAt ?? invoice.createdAt;
    const key = createHash('sha256')
      .update(JSON.stringify([document, payUrl, createdAt]))
      .digest('hex');
    const cached = pdfCache.get(key);
    if (cached) return cached;
    const pdf = await renderInvoicePdf(document, { payUrl, createdAt: new Date(Date.parse(createdAt)) });
    pdfCache.set(key, pdf);
    if (pdfCache.size > PDF_CACHE_SIZE) pdfCache.delete(pdfCache.keys().next().value!);
    return pdf;
  }

  /**
   * The session the pay link sends the payer back to: one partly paid first (the money already
   * there waits for the rest at its address; a new session would ask for the rest a second time),
   * else the newest still open long enough to pay.
   */
  async function reusableSession(invoice: Invoice): Promise<CheckoutSessionDoc | null> {
    const pending = invoice.paymentAttempts
      .filter((a) => a.status === 'pending')
      .map((a) => a.checkoutSessionId)
      .reverse();
    let open: CheckoutSessionDoc | null = null;
    for (const id of pending) {
      const session = await sessions.get(id);
      if (session?.status === 'incomplete') return session;
      if (
        open === null &&
        session?.status === 'open' &&
        Date.parse(session.expiresAt) - deps.clock.now() > MIN_REMAINING_MS
      )
        open = session;
    }
    return open;
  }

  const pages = schemaRoutes(router, { tag: 'Hosted invoices', auth: 'public' });
  const params = idParams('invoice');
  const notFoundPage: PageAnswer = {
    status: 404,
    description: 'No invoice with this id, or a draft or deleted one: a page saying so',
  };

  pages.route(
    {
      method: 'get',
      path: '/:id',
      summary: 'The invoice page',
      description: 'The invoice as a document, with the pay action while something is due.',
      params,
      produces: 'text/html',
      pages: [
        { status: 200, description: 'The invoice page' },
        notFoundPage,
        limitedPage,
        unavailablePage('The invoice could not be shown'),
      ],
    },
    async (ctx, { params: { id } }) => {
      const invoice = await pageInvoice(ctx, id);
      if (!invoice) return;
      ctx.set('Cache-Control', 'no-store');
      await sendPage(ctx, invoice, 200);
    },
  );

  pages.route(
    {
      method: 'get',
      path: '/:id/pdf',
      summary: 'The invoice as a PDF',
      description: 'The same document as the page, as a download named after the invoice number.',
      params,
      produces: 'application/pdf',
      // A browser follows the PDF link: an unknown invoice and its passing refusals are pages, as the invoice page's.
      pages: [
        { status: 200, description: 'The invoice as a PDF' },
        { ...notFoundPage, produces: 'text/html' },
        { ...limitedPage, produces: 'text/html' },
        { ...unavailablePage('The PDF could not be drawn'), produces: 'text/html' },
      ],
    },
    async (ctx, { params: { id } }) => {
      const invoice = await pageInvoice(ctx, id);
      if (!invoice) return;
      const { document } = await documentOf(invoice);
      ctx.set('Cache-Control', 'no-store');
      // The number is the merchant's text: only what is safe in a quoted filename is kept.
      const filename = `${invoice.number.replace(/[^A-Za-z0-9._-]+/g, '_') || 'invoice'}.pdf`;
      ctx.set('Content-Disposition', `attachment; filename="${filename}"`);
      ctx.type = 'application/pdf';
      ctx.body = await invoicePdf(invoice, document);
    },
  );

  /** The pay link: to a checkout session while something is due, otherwise the document saying why not. */
  async function payInvoice(ctx: ApiContext, id: string): Promise<void> {
    const invoice = await pageInvoice(ctx, id);
    if (!invoice) return;
    ctx.set('Cache-Control', 'no-store');
    if ((invoice.status === 'open' || invoice.status === 'uncollectible') && BigInt(invoice.amountRemaining) > 0n) {
      const reuse = await reusableSession(invoice);
      if (reuse) {
        ctx.redirect(reuse.url);
        return;
      }
      const tenant = { organizationId: invoice.organizationId, environment: invoice.environment, actor: 'payer' };
      const opened = await deps
        .createCheckoutSession(
          parseWith(CheckoutSessionCreate, {
            mode: 'payment',
            // Back to the invoice, not its pay link: that would open another session before the payment is recorded.
            successUrl: invoicePageUrl(deps.publicUrl, invoice.id),
            clientReferenceId: invoice.number,
            metadata: { invoiceId: invoice.id, invoiceNumber: invoice.number },
            ...paymentSettingOf(invoice),
            lineItems: {
              data: [
                {
                  quantity: 1,
                  priceData: {
                    currency: invoice.currency,
                    unitAmount: invoice.amountRemaining,
                    productData: { name: `Invoice ${invoice.number}`, description: checkoutDescription(invoice) },
                  },
                },
              ],
            },
          }),
          tenant,
          {
            invoiceId: invoice.id,
            customerId: invoice.customerId,
            // A subscription's invoice (a renewal, or the first of a recurring series): its session bills that subscription.
            ...(invoice.subscriptionId ? { subscriptionId: invoice.subscriptionId } : {}),
            // The invoice's assets, when it names some: an internal restriction (the public request has no field for it).
            ...(invoice.paymentMethods.assetIds.length > 0 ? { assetIds: invoice.paymentMethods.assetIds } : {}),
          },
        )
        .catch((error: unknown) => {
          // The merchant's setup takes no payment now (no wallet for its currency): the payer did nothing wrong.
          if (isMerchantSetupRefusal(error)) return null;
          throw error;
        });
      if (!opened) {
        await sendPage(
          ctx,
          invoice,
          409,
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
    // Paid or void: the document says so (a void one can no longer be paid: 410).
    await sendPage(ctx, invoice, invoice.status === 'void' ? 410 : 200);
  }

  pages.route(
    {
      method: 'get',
      path: '/:id/pay',
      summary: 'Pay the invoice',
      description:
        'The pay link: while something is due, sends the payer to a checkout session for the amount remaining (its open one, or a new one); otherwise shows the invoice saying why not.',
      params,
      produces: 'text/html',
      pages: [
        { status: 200, description: 'Nothing is due (paid): the invoice page saying so' },
        { status: 302, description: "To the invoice's checkout session", redirect: true },
        notFoundPage,
        {
          status: 409,
          description: 'The business has no way set up to take this payment now: the invoice page saying so',
        },
        { status: 410, description: 'The invoice is void: the invoice page saying so' },
        limitedPage,
        unavailablePage('The payment could not be started'),
      ],
    },
    (ctx, { params: { id } }) => payInvoice(ctx, id),
  );

  return router;
}
