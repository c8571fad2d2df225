import Router from '@koa/router';
import type Koa from 'koa';
import QRCode from 'qrcode';
import { scannableOf } from '../../chain-ingest/tron/payment-request.ts';
import { checkoutSessionAggregate } from '../../../machines/checkout-session.aggregate.ts';
import type { CheckoutSessionCommand } from '../../../machines/checkout-session.decide.ts';
import type { CheckoutSession } from '../../../machines/checkout-session.types.ts';
import { isEmail } from '../../actors/customer.ts';
import { organizationRecordId } from '../../actors/organization.ts';
import { createPromotionCodeApplier } from '../../actors/apply-promotion-code.ts';
import { withInvoicesPaidLate } from '../../dashboard/invoices-paid-late.ts';
import { renderCheckoutPage, type ProductView } from '../../hosted/checkout-page.ts';
import { type PayAt, paymentWords, payerStatus } from '../../hosted/checkout-status.ts';
import { answerNotFoundPage } from '../../hosted/error-page.ts';
import { payerRefusal } from '../../hosted/checkout-refusals.ts';
import { CHECKOUT_NOTICES } from '../../hosted/page-notices.ts';
import { walletDue } from '../../hosted/wallet-actions.ts';
import type { DevnetInfo } from '../../chain-ingest/evm/devnet/devnet-info.ts';
import { PRODUCTS, type ProductDoc } from '../../projections/catalog.projection.ts';
import { COLLECTIONS, type CheckoutSessionDoc, type OrganizationDoc } from '../../projections/collections.ts';
import { shownAsset } from '../../projections/public-views.ts';
import { shownAddress } from '../../shared/evm-address.ts';
import { NotFoundError, ValidationError, WeirError } from '../../shared/errors.ts';
import { isUuid } from '../../shared/ids.ts';
import { formatAmount } from '../../shared/money.ts';
import type { ReadStore } from '../../read-store/read-store.ts';
import type { ApiContext, ApiDeps, ApiState } from '../api-context.ts';
import type { UnexpectedErrorLog } from '../middleware.ts';
import { isPassingRefusal, recordErrorPages } from './hosted-error-pages.ts';
import { readUrlEncodedFields } from '../form-body.ts';
import { idParams } from '../schema/fields.ts';
import {
  CancelAnswer,
  compressedPage,
  hostedNotFound,
  limitedPage,
  payerRefusals,
  PayerStatusSchema,
  PaymentMethodAnswer,
  PaymentMethodForm,
  PaymentMethodRequest,
  PromotionCodeAnswer,
  PromotionCodeRequest,
  tooLargePage,
  unavailablePage,
} from '../schema/hosted.ts';
import { schemaRoutes, validationErrorOf } from '../schema/route.ts';

const QR = { type: 'svg', margin: 1 } as const;
const FINAL_STATUSES = new Set(['complete', 'expired', 'canceled']);
/** The fields the page's forms send, as the payer knows them. */
const FORM_FIELDS = ['action', 'assetId', 'code', 'email'] as const;
const FORM_FIELD_WORDS: Record<(typeof FORM_FIELDS)[number], string> = {
  action: 'action',
  assetId: 'asset',
  code: 'promotion code',
  email: 'email',
};
const FORM_REFUSED = 'This form cannot be used';

/**
 * Around the checkout page's own routes (`GET` and the forms' `POST /checkout/{id}`): a passing refusal
 * or an unexpected error is a page in the session's frame with a way back to it (hosted-error-pages.ts).
 * With `scriptRoutes`, around the other paths under `/checkout/`: only a path no route has is that page,
 * the script's JSON routes keep their JSON answers, a refusal's message in the words the page's forms
 * show the payer (`payerRefusal`), which the script shows as they are.
 */
export function checkoutErrorPages(
  readStore: ReadStore,
  logUnexpected: UnexpectedErrorLog,
  scriptRoutes = false,
): Koa.Middleware<ApiState> {
  const sessions = readStore.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions);
  return recordErrorPages(readStore, logUnexpected, {
    find: async (id) => (isUuid(id) ? await sessions.get(id) : null),
    back: (id) => ({ href: `/checkout/${id}`, words: 'Back to the checkout' }),
    notices: CHECKOUT_NOTICES,
    scriptRoutes: scriptRoutes ? (error) => payerRefusal(error).detail : undefined,
  });
}

/**
 * Public routes of the hosted checkout page. They need no key: a session id is an unguessable
 * uuid, and each route acts on that one session only.
 */
export function hostedCheckoutRoutes(
  deps: ApiDeps & { devnet?: DevnetInfo | null; tronDevnet?: DevnetInfo | null },
): Router<ApiState> {
  const router = new Router<ApiState>({ prefix: '/checkout' });
  const sessions = deps.readStore.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions);
  const orgs = deps.readStore.collection<OrganizationDoc>(COLLECTIONS.organizations);
  const products = deps.readStore.collection<ProductDoc>(PRODUCTS);
  const applyPromotionCode = createPromotionCodeApplier(deps);
  /** A network's name as the registry gives it ("Local Devnet"), the bus name when no rail offers it now. */
  const names = (network: string) =>
    [...deps.rail.networks('test'), ...deps.rail.networks('live')].find((n) => n.network === network)?.name ?? network;
  const orgOf = (session: CheckoutSession) =>
    orgs.get(organizationRecordId(session.organizationId, session.environment));
  /** The rail's request to pay at one of the session's addresses, in the session's words. */
  const payAt = async (session: CheckoutSession, org?: OrganizationDoc | null): Promise<PayAt> => {
    const words = paymentWords(session, (org === undefined ? await orgOf(session) : org)?.name);
    return (address, amountDue) => deps.rail.paymentRequest({ address, amountDue, words });
  };
  /**
   * `found` as the dashboard's session page reads it: the late money its invoice counted while owed
   * marked as having paid it (the invoice's log says which, not the session's), with that invoice.
   */
  const withItsInvoice = async (found: CheckoutSessionDoc) => {
    const tenant = { organizationId: found.organizationId, environment: found.environment };
    const { sessions: marked, invoices } = await withInvoicesPaidLate(deps.readStore, tenant, [found]);
    return { session: marked[0] ?? found, invoice: found.invoiceId ? invoices.get(found.invoiceId) : undefined };
  };
  /** What the payer is told of `found` (see payerStatus), and the session as told (its invoice's late money marked). */
  const statusOf = async (found: CheckoutSessionDoc, loaded?: OrganizationDoc | null) => {
    const org = loaded === undefined ? await orgOf(found) : loaded;
    const { session, invoice } = await withItsInvoice(found);
    const pay = await payAt(session, org);
    return { session, status: payerStatus(session, names, deps.clock.now(), deps.chainProgress, pay, org, invoice) };
  };

  const load = async (id: string): Promise<CheckoutSessionDoc> => {
    const doc = isUuid(id) ? await sessions.get(id) : null;
    if (!doc) throw new NotFoundError('checkout session', id);
    return doc;
  };
  const run = async (session: CheckoutSession, command: CheckoutSessionCommand) => {
    const result = await deps.commands.handle(checkoutSessionAggregate, session.id, command, {
      organizationId: session.organizationId,
      environment: session.environment,
      actor: 'payer',
    });
    if (result.position !== null) await deps.projections.waitFor(result.position);
    return (await sessions.get(session.id))!;
  };

  /** A browser opened it: an HTML page, not the API's JSON error. */
  const notFoundPage = (ctx: ApiContext) =>
    answerNotFoundPage(ctx, {
      heading: 'Checkout not found',
      message:
        'This checkout does not exist or is no longer available. Check the link, or go back to the shop and start again.',
    });
  /** The page of `session` as it is now, with the request's QR drawn here (the page works without its script). */
  const renderPage = async (
    ctx: ApiContext,
    found: CheckoutSessionDoc,
    problem: { title: string; detail: string; code?: string; email?: string } | null,
  ) => {
    const org = await orgOf(found);
    const { session, status } = await statusOf(found, org);
    const views = new Map<string, ProductView>();
    for (const item of session.lineItems.data) {
      const product = await products.get(item.price.productId);
      if (product) views.set(product.id, { description: product.description, images: product.images });
    }
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = renderCheckoutPage({
      session,
      org,
      status,
      names,
      products: views,
      wallet: {
        networks: deps.rail.networks(session.environment),
        devnet: deps.devnet ?? null,
        tronDevnet: deps.tronDevnet ?? null,
      },
      qrSvg: status.payment ? await QRCode.toString(scannableOf(status.payment.paymentUri), QR) : null,
      problem,
    });
  };

  const pages = schemaRoutes(router, { tag: 'Hosted checkout', auth: 'public' });
  const params = idParams('checkout session');
  const notFound = hostedNotFound('checkout session');

  pages.route(
    {
      method: 'get',
      path: '/:id',
      summary: 'The checkout page',
      description: 'What the payer opens: the amount, the assets offered, and the payment once one is chosen.',
      params,
      produces: 'text/html',
      pages: [
        { status: 200, description: 'The checkout page' },
        { status: 404, description: 'No checkout session with this id: a page saying so' },
        limitedPage,
        unavailablePage('The checkout could not be shown'),
      ],
    },
    async (ctx, { params: { id } }) => {
      const session = isUuid(id) ? await sessions.get(id) : null;
      ctx.set('Cache-Control', 'no-store');
      if (!session) return notFoundPage(ctx);
      await renderPage(ctx, session, null);
    },
  );

  /**
   * The page's forms, for a payer without JavaScript: an asset button (the choice is recorded as the
   * JSON route records it), the promotion code (applied as the JSON route applies it) and the cancel;
   * and, with or without it, the email a subscription session that names no customer asks first.
   * Each sends the payer back to the page (303), the cancel to the merchant's cancel URL as the
   * script does; a refusal shows the page again saying why in plain words (400; 409 for a code after
   * a payment was sent). A session that is over (or over while the form was open) is shown as it is.
   */
  pages.route(
    {
      method: 'post',
      path: '/:id',
      summary: "The checkout page's forms (the page without JavaScript)",
      description:
        "The checkout page's asset buttons, email, promotion code and cancel, posted as `application/x-www-form-urlencoded` (the only type read). Records the payer's email (the first step of a subscription session that names no customer, before any asset can be chosen), records the choice as `POST /checkout/{id}/payment-method` does, applies the code as `POST /checkout/{id}/promotion-code` does, or cancels as `POST /checkout/{id}/cancel` does, and sends the payer back to the page (which then shows the amount, address and QR code, or the discount), or after a cancel to the merchant's cancel URL.",
      params,
      bodyTypes: { 'application/x-www-form-urlencoded': PaymentMethodForm },
      produces: 'text/html',
      pages: [
        {
          status: 303,
          description: "Back to the checkout page (after a cancel: to the merchant's cancel URL)",
          redirect: true,
        },
        {
          status: 400,
          description:
            'The checkout page again, saying why the form, email, asset, code or cancel was refused: a form of another type, an action none of the forms sends, no asset, a field sent twice with different values (never JSON: a browser posted it)',
        },
        { status: 404, description: 'No checkout session with this id: a page saying so' },
        {
          status: 409,
          description:
            'A promotion code after a payment was sent: the checkout page again saying it can only be applied before paying',
        },
        tooLargePage,
        compressedPage,
        limitedPage,
        unavailablePage('The form could not be taken'),
      ],
    },
    async (ctx, { params: { id } }) => {
      const session = isUuid(id) ? await sessions.get(id) : null;
      ctx.set('Cache-Control', 'no-store');
      if (!session) return notFoundPage(ctx);
      const back = (to = `/checkout/${session.id}`) => {
        ctx.status = 303;
        ctx.redirect(to);
      };
      // A browser posted it: every refusal is the page again saying why (with the refusal's status), never the API's JSON.
      let form: Record<string, string> = {};
      /** The page again with the refusal in the status line, unless the session is over by now (its page says so). */
      const refuse = async (title: string, detail: string, status = 400) => {
        const now = await sessions.get(session.id);
        if (!now || FINAL_STATUSES.has(now.status)) return back();
        ctx.status = status;
        // A refused code or email stays in its input (escaped as the page draws it), for the payer to correct.
        await renderPage(ctx, now, {
          title,
          detail,
          ...(form.action === 'promotion-code' ? { code: form.code ?? '' } : {}),
          ...(form.action === 'email' ? { email: form.email ?? '' } : {}),
        });
      };
      let fields: URLSearchParams;
      try {
        fields = await readUrlEncodedFields(ctx);
      } catch (error) {
        // A body too large is the 413 page (checkoutErrorPages), one compressed its 415 page.
        if (!(error instanceof ValidationError)) throw error;
        return refuse(FORM_REFUSED, 'It was not sent as a web form: use the buttons below.');
      }
      form = Object.fromEntries(fields);
      if (FINAL_STATUSES.has(session.status)) return back();
      // None of the page's forms names a field twice: which of two actions, assets or codes was meant is not guessed.
      const twice = FORM_FIELDS.find((name) => new Set(fields.getAll(name)).size > 1);
      if (twice)
        return refuse(FORM_REFUSED, `It named more than one ${FORM_FIELD_WORDS[twice]}: try again from this page.`);
      const parsed = PaymentMethodForm.safeParse(form);
      if (!parsed.success) {
        const { field, message } = validationErrorOf(parsed.error);
        const name = FORM_FIELDS.find((f) => f === field);
        return refuse(
          name === 'assetId' ? 'This asset cannot be used' : FORM_REFUSED,
          `The ${name ? FORM_FIELD_WORDS[name] : 'form'} ${message.replace(/^[\w.[\]]+: /, '')}.`,
        );
      }
      const request = parsed.data;
      /**
       * A refusal of the command (a 4xx WeirError) is told the payer in plain words with its status
       * (`payerRefusal`); a passing one (a busy record) is the page to try again from, as on the invoice
       * and link pages; anything else is the server's.
       */
      const attempt = async (title: string, act: () => Promise<string | undefined>) => {
        try {
          return back(await act());
        } catch (error) {
          if (isPassingRefusal(error) || !(error instanceof WeirError)) throw error;
          const { status, detail } = payerRefusal(error);
          await refuse(title, detail, status);
        }
      };
      const codeRefused = 'This promotion code cannot be used';
      if (request.action === 'email') {
        const email = (request.email ?? '').trim();
        const emailRefused = 'This email cannot be used';
        if (email === '') return refuse(emailRefused, 'The email is required: renewal invoices are sent to it.');
        if (!isEmail(email))
          return refuse(emailRefused, 'The email must be an email address, such as payer@example.com.');
        return attempt(emailRefused, async () => {
          await run(session, { type: 'CollectCustomerEmail', email });
          return undefined;
        });
      }
      if (request.action === 'cancel')
        return attempt('Could not cancel', async () => {
          const updated = await run(session, { type: 'CancelCheckoutSession', reason: 'canceled by the payer' });
          return updated.cancelUrl ?? undefined;
        });
      if (request.action === 'promotion-code') {
        // The JSON route's check of the code, in the payer's words as it says them: "The promotion code must not be empty."
        const code = PromotionCodeRequest.safeParse({ code: request.code });
        if (!code.success) return refuse(codeRefused, payerRefusal(validationErrorOf(code.error)).detail);
        return attempt(codeRefused, async () => {
          const applied = await applyPromotionCode(session, code.data.code);
          if (applied.position !== null) await deps.projections.waitFor(applied.position);
          return undefined;
        });
      }
      const address = session.addresses.find((a) => a.id === request.assetId || a.asset.id === request.assetId);
      if (!address)
        return refuse('This asset cannot be used', 'It is not offered by this checkout: choose one of those below.');
      return attempt('This asset cannot be used', async () => {
        await run(session, { type: 'SelectPaymentMethod', addressId: address.id });
        return undefined;
      });
    },
  );

  /** The session as the page shows it (see payerStatus): polled by the page every second or so. */
  pages.route(
    {
      method: 'get',
      path: '/:id/status',
      summary: 'The checkout as its page shows it',
      description: 'Polled by the checkout page: the status in words, the amounts, and what to send now.',
      params,
      response: PayerStatusSchema,
      errors: [notFound],
    },
    async (ctx, { params: { id } }) => {
      const found = await load(id);
      ctx.set('Cache-Control', 'no-store');
      const { session, status } = await statusOf(found);
      // The QR of what to send now, so the page's request follows payments as they are seen.
      const wallet = walletDue(session);
      return status.payment
        ? {
            ...status,
            payment: {
              ...status.payment,
              address: shownAddress(status.payment.address),
              assetAddress: shownAddress(status.payment.assetAddress),
              qrSvg: await QRCode.toString(scannableOf(status.payment.paymentUri), QR),
            },
            wallet,
          }
        : { ...status, wallet };
    },
  );

  /** The "QR reveal": the payer picks an asset; the payment intent records it with the amount due. */
  pages.route(
    {
      method: 'post',
      path: '/:id/payment-method',
      summary: 'Choose the asset to pay with',
      description:
        "Records the choice on the payment intent with the amount due in that asset, and answers where to send it. A subscription session that names no customer asks the payer's email first, with the page's email form (`POST /checkout/{id}` with `action=email`): before it is given, a 400 `parameter_missing` saying so (this route takes no email).",
      params,
      body: PaymentMethodRequest,
      response: PaymentMethodAnswer,
      errors: [payerRefusals('status_transition_invalid'), notFound],
    },
    async (_ctx, { params: { id }, body: { assetId } }) => {
      const session = await load(id);
      const address = session.addresses.find((a) => a.id === assetId || a.asset.id === assetId);
      if (!address) throw new ValidationError('assetId', 'is not offered by this checkout session');
      const updated = await run(session, { type: 'SelectPaymentMethod', addressId: address.id });
      const method = updated.paymentIntent.paymentMethod!;
      const { uri, payee } = (await payAt(updated))(address, BigInt(method.amountDue));
      return {
        address: shownAddress(payee),
        network: address.network,
        networkName: names(address.network),
        chainId: address.asset.chainId,
        symbol: address.asset.symbol,
        assetName: address.asset.name,
        asset: shownAsset(address.asset),
        amountDueRaw: method.amountDue,
        amountDue: formatAmount(BigInt(method.amountDue), address.asset.decimals),
        paymentUri: uri,
        qrSvg: await QRCode.toString(scannableOf(uri), QR),
        wallet: walletDue(updated),
      };
    },
  );

  /** The payer applies a promotion code: checked in full, then counted on the coupon, then applied (see the applier). */
  pages.route(
    {
      method: 'post',
      path: '/:id/promotion-code',
      summary: 'Apply a promotion code',
      description:
        "A subscription session that names no customer takes a code only once the payer's email is given (the page's email form, `POST /checkout/{id}` with `action=email`): before, a 400 `parameter_missing` saying so.",
      params,
      body: PromotionCodeRequest,
      response: PromotionCodeAnswer,
      errors: [
        payerRefusals(
          'promotion_code_invalid',
          'promotion_codes_not_allowed',
          'promotion_code_currency_mismatch',
          'parameters_exclusive',
          'status_transition_invalid',
          'checkout_session_expired',
          'coupon_disabled',
          'coupon_limit_reached',
          'coupon_expired',
          'promotion_code_expired',
          'promotion_code_limit_reached',
          'promotion_code_already_redeemed',
          'promotion_code_redemption_released',
        ),
        {
          status: 409,
          codes: ['payment_pending'],
          description:
            'A payment to the session is pending, or was taken away by a chain reorganization and may be mined again: a discount now would turn it into an overpayment. Nothing is redeemed',
        },
        notFound,
      ],
    },
    async (_ctx, { params: { id }, body: { code } }) => {
      const session = await load(id);
      const applied = await applyPromotionCode(session, code);
      if (applied.position !== null) await deps.projections.waitFor(applied.position);
      const updated = (await sessions.get(session.id))!;
      return {
        status: updated.status,
        code: applied.code,
        amountDiscount: applied.amountDiscount,
        amountSubtotal: updated.amountSubtotal,
        amountTotal: updated.amountTotal,
        amountDetails: updated.amountDetails,
      };
    },
  );

  pages.route(
    {
      method: 'post',
      path: '/:id/cancel',
      summary: 'Cancel the checkout',
      description: "The payer gives up: the session is canceled, and the page sends them to the merchant's cancel URL.",
      params,
      response: CancelAnswer,
      errors: [
        { status: 400, codes: ['status_transition_invalid'], description: 'The session is no longer open' },
        notFound,
      ],
    },
    async (_ctx, { params: { id } }) => {
      const session = await load(id);
      const updated = await run(session, { type: 'CancelCheckoutSession', reason: 'canceled by the payer' });
      return { status: updated.status, redirectUrl: updated.cancelUrl };
    },
  );

  return router;
}
