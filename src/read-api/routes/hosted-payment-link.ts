import Router from '@koa/router';
import type Koa from 'koa';
import type { PaymentLink } from '../../../machines/payment-link.types.ts';
import type { CreateCheckoutSession } from '../../actors/create-checkout-session.ts';
import { organizationRecordId } from '../../actors/organization.ts';
import { offersAsset, payableSessionNetworks, sessionNetworks } from '../../actors/session-networks.ts';
import {
  FORM_NOT_READ,
  readPayerForm,
  withPressedAmount,
  type FormProblem,
  type PayerForm,
} from '../../hosted/payment-link-form.ts';
import {
  PAYMENT_LINK_PAGE_HEADERS,
  renderPaymentLinkNotice,
  renderPaymentLinkPage,
} from '../../hosted/payment-link-page.ts';
import { LINK_NOTICES, type LinkNotice } from '../../hosted/payment-link-notices.ts';
import type { ReadStore } from '../../read-store/read-store.ts';
import { paymentLinkCatalog } from '../payment-link-catalog.ts';
import { COLLECTIONS, type OrganizationDoc } from '../../projections/collections.ts';
import { PAYMENT_LINKS, usedUp, type PaymentLinkDoc } from '../../projections/payment-links.projection.ts';
import { ValidationError, WeirError } from '../../shared/errors.ts';
import { scrubUrls, type Logger } from '../../shared/logger.ts';
import { isUuid } from '../../shared/ids.ts';
import type { ApiContext, ApiDeps, ApiState } from '../api-context.ts';
import { readUrlEncodedForm } from '../form-body.ts';
import { isMerchantSetupRefusal } from '../merchant-setup.ts';
import type { UnexpectedErrorLog } from '../middleware.ts';
import { hostedErrorPages, isPassingRefusal, pathId } from './hosted-error-pages.ts';
import { CheckoutSessionCreate } from '../schema/checkout-session-create.ts';
import { idParams } from '../schema/fields.ts';
import { compressedPage, limitedPage, PayerFormSchema, tooLargePage, unavailablePage } from '../schema/hosted.ts';
import { type PageAnswer, parseWith, schemaRoutes } from '../schema/route.ts';

/** The create-session request a payer's submission makes: the link's price (or the amount entered) and its options. */
export function checkoutRequestFor(link: PaymentLink, amount: bigint | null, publicUrl: string) {
  const preferred = link.allowedChains.find((c) => c.isPreferred);
  return {
    mode: link.pricing === 'subscription' ? 'subscription' : 'payment',
    // With a hosted confirmation the payer stays on the session's own page, which shows the message.
    successUrl:
      link.afterCompletion === 'redirect' && link.afterCompletionRedirectUrl
        ? link.afterCompletionRedirectUrl
        : `${publicUrl}/checkout/{CHECKOUT_SESSION_ID}`,
    submitType: link.submitType,
    afterCompletion: link.afterCompletion,
    afterCompletionConfirmMsg: link.afterCompletionConfirmMsg,
    allowPromotionCodes: link.allowPromotionCodes,
    lineItems: {
      data: [
        link.priceId !== null
          ? { priceId: link.priceId, quantity: 1 }
          : {
              priceData: { currency: link.currency, unitAmount: String(amount ?? 0n), productId: link.productId },
              quantity: 1,
            },
      ],
    },
    ...(link.allowedChains.length > 0
      ? {
          paymentSetting: {
            allowedChains: link.allowedChains.map((c) => ({ chainId: c.chainId })),
            ...(preferred ? { preferredChainId: preferred.chainId } : {}),
          },
        }
      : {}),
  };
}

type FoundLink = { link: PaymentLinkDoc; org: OrganizationDoc | null };

/** The link of an id (null: none, or a deleted one) and its organization. */
function linkFinder(readStore: ReadStore): (id: string) => Promise<FoundLink | null> {
  const links = readStore.collection<PaymentLinkDoc>(PAYMENT_LINKS);
  const orgs = readStore.collection<OrganizationDoc>(COLLECTIONS.organizations);
  return async (id) => {
    const link = isUuid(id) ? await links.get(id) : null;
    if (!link || link.deleted) return null;
    return { link, org: await orgs.get(organizationRecordId(link.organizationId, link.environment)) };
  };
}

/** Answers with `notice` as a page, in the frame of the link it is `about` (unbranded when none). */
function answerNotice(ctx: Koa.Context, notice: LinkNotice, about: FoundLink | null): void {
  ctx.status = notice.status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set(PAYMENT_LINK_PAGE_HEADERS);
  ctx.body = renderPaymentLinkNotice(about?.org ?? null, notice, about?.link ?? null);
}

/** The link's passing refusals: its own words, with a way back to its form. */
const LINK_REFUSALS = {
  rateLimited: LINK_NOTICES.tooManyRequests,
  startsLimited: LINK_NOTICES.tooManyAttempts,
  tooLarge: LINK_NOTICES.formTooLarge,
  unavailable: LINK_NOTICES.tryAgain,
  unreadable: LINK_NOTICES.formNotRead,
};

/**
 * Around every `/pay/` request, the rate limits and body limit included (hosted-error-pages.ts): a
 * passing refusal or an unexpected error is a page for the payer, in the link's frame when the path
 * names one, not the API's JSON error.
 */
export function paymentLinkErrorPages(
  readStore: ReadStore,
  logUnexpected: UnexpectedErrorLog,
): Koa.Middleware<ApiState> {
  const find = linkFinder(readStore);
  return hostedErrorPages({
    frameOf: (ctx) => find(pathId(ctx)),
    render: (found, notice) => renderPaymentLinkNotice(found?.org ?? null, notice, found?.link ?? null),
    notices: LINK_REFUSALS,
    logUnexpected,
  });
}

/**
 * The public page of a payment link, `/pay/{id}`. GET shows the form of what the link collects;
 * POST checks the payer's input and either shows the form again with every problem (400), or
 * opens a checkout session carrying `paymentLinkId` and the collected data and sends the payer
 * to it (303). An unknown or deleted link is a 404 page, an inactive one a 410 page, and so is a
 * `one_time` link that has been paid (a 410 page saying it has been used) and one whose product or
 * price is gone or inactive (GET and POST alike, never the session's field errors). Once the payer's
 * input is read, opening the session refuses nothing of theirs: a refusal then is a page in plain words
 * (`LINK_NOTICES`), never the refusal itself, which names the merchant's wallets, prices and routes. The
 * link changed since (deactivated, paid, its price archived) is its notice above; the merchant's setup
 * (no wallet for the currency, a broken one) or any other setting of the link refusing it, a 409 page
 * saying it cannot be paid right now; a rate limit, a form too large, a passing failure, a page to try
 * again from (`paymentLinkErrorPages`).
 *
 * One_time links and concurrent payers: what is refused is a NEW session once a session of the
 * link has completed. A session opened before that stays payable, so two payers who both opened
 * the page before either paid can both pay, and the merchant gets two payments (money sent on
 * chain is never refused; the merchant refunds one). An open, unpaid session does not hold the
 * link for its payer: if it did, a payer who opens the page and walks away (or a link preview
 * that submits the form, or the same payer reopening the link in another tab) would lock every
 * other payer out until the session expires, which for a link sent to one person is worse than
 * the rare double payment. The check reads the read model, so a payment that completed a moment
 * ago may not be seen yet by a request racing it; that too ends at most in a second payment.
 */
export function hostedPaymentLinkRoutes(
  deps: ApiDeps & { createCheckoutSession: CreateCheckoutSession; logger?: Logger },
): Router<ApiState> {
  const router = new Router<ApiState>({ prefix: '/pay' });
  const find = linkFinder(deps.readStore);
  const log = deps.logger?.child({ component: 'payment-link-page' });

  /**
   * A refusal the payer is told of in plain words (`LINK_NOTICES`): the refusal itself, for the operator
   * and merchant to see why the link takes no payment, goes to the log only (its URLs cut, as every logged error's).
   */
  const answerRefused = (ctx: ApiContext, notice: LinkNotice, found: FoundLink, error: WeirError) => {
    const refusal = scrubUrls(error.message);
    log?.warn(
      {
        event: 'payment_link.refused',
        requestId: ctx.state.requestId,
        paymentLinkId: found.link.id,
        status: error.statusCode,
        code: error.code,
        refusal,
      },
      `payment link ${found.link.id}: a payment could not be started: ${refusal}`,
    );
    answerNotice(ctx, notice, found);
  };

  // A link made before deactivating or deleting what active links sell was refused may outlive it.
  const { whyNotSold } = paymentLinkCatalog(deps.readStore);

  const html = (ctx: ApiContext, status: number, body: string) => {
    ctx.status = status;
    ctx.type = 'text/html; charset=utf-8';
    ctx.set(PAYMENT_LINK_PAGE_HEADERS);
    ctx.body = body;
  };

  /** Why payers may not use `link` now, or null when they may. */
  async function whyUnusable(link: PaymentLinkDoc): Promise<LinkNotice | null> {
    if (usedUp(link)) return LINK_NOTICES.used;
    // The merchant's switch: takesPayments is also false for the reasons told apart above and below.
    if (!link.isActive) return LINK_NOTICES.inactive;
    if ((await whyNotSold(link)) !== null) return LINK_NOTICES.notSold;
    return null;
  }

  /** The link and its organization when payers may use it; otherwise answers with a notice page and gives null. */
  async function usable(ctx: ApiContext, id: string): Promise<FoundLink | null> {
    const found = await find(id);
    const why = found ? await whyUnusable(found.link) : LINK_NOTICES.notFound;
    if (why === null) return found;
    answerNotice(ctx, why, found);
    return null;
  }

  /**
   * The decimals an amount of the link's currency may have: the finest of its assets on the networks
   * the link's session may be paid on (`sessionNetworks`; null when none, which opening the session refuses itself).
   */
  function currencyDecimals(link: PaymentLink, org: OrganizationDoc | null): number | null {
    const chains = link.allowedChains.map((c) => c.chainId);
    const networks = sessionNetworks(
      deps.rail,
      link.environment,
      org?.withdrawalAddresses ?? [],
      chains.length > 0 ? chains : undefined,
      offersAsset(link.currency, null),
    );
    const decimals = payableSessionNetworks(networks).flatMap((n) => n.assets.map((a) => a.decimals));
    return decimals.length > 0 ? Math.max(...decimals) : null;
  }

  const pages = schemaRoutes(router, { tag: 'Hosted payment links', auth: 'public' });
  const params = idParams('payment link');
  /** The link's notices: what a payer sees instead of its form. */
  const unusable: PageAnswer[] = [
    { status: 404, description: 'No payment link with this id, or a deleted one: a page saying so' },
    {
      status: 410,
      description:
        'The link is inactive, a one-time link already paid, or its product or price is no longer offered: a page saying so',
    },
  ];

  /** Refusals the payer may try again after: a page saying so, with a way back to the link's form. */
  const passing: PageAnswer[] = [tooLargePage, limitedPage, unavailablePage('The payment could not be started')];

  pages.route(
    {
      method: 'get',
      path: '/:id',
      summary: 'The payment link page',
      description:
        'The form of what the link collects: the amount (when the payer chooses it), contact details, addresses, custom fields.',
      params,
      produces: 'text/html',
      pages: [{ status: 200, description: 'The payment link page' }, ...unusable, limitedPage],
    },
    async (ctx, { params: { id } }) => {
      const found = await usable(ctx, id);
      if (found) html(ctx, 200, renderPaymentLinkPage(found.link, found.org, { form: {}, problems: [] }));
    },
  );

  /** The payer's submission: the form again with every problem, or a checkout session to pay. */
  async function submit(ctx: ApiContext, id: string): Promise<void> {
    const found = await usable(ctx, id);
    if (!found) return;
    const { link, org } = found;
    const refuse = (form: PayerForm, problems: FormProblem[], message?: string) =>
      html(ctx, 400, renderPaymentLinkPage(link, org, { form, problems, ...(message ? { message } : {}) }));
    let form: PayerForm;
    try {
      form = withPressedAmount(await readUrlEncodedForm(ctx));
    } catch (error) {
      // Only a client that is not a browser posts anything but a form (or one gone mid-form): told so on
      // the form in plain words, not the refusal's, which names the content type the route reads.
      if (error instanceof ValidationError) refuse({}, [], FORM_NOT_READ);
      else throw error;
      return;
    }
    const read = readPayerForm(link, form, currencyDecimals(link, org));
    if (!read.ok) {
      refuse(form, read.problems);
      return;
    }
    try {
      const tenant = { organizationId: link.organizationId, environment: link.environment, actor: 'payer' };
      const { session, position } = await deps.createCheckoutSession(
        parseWith(CheckoutSessionCreate, checkoutRequestFor(link, read.submission.amount, deps.publicUrl)),
        tenant,
        { paymentLinkId: link.id, collected: read.submission.collected },
      );
      if (position !== null) await deps.projections.waitFor(position);
      ctx.status = 303;
      ctx.redirect(session.url);
    } catch (error) {
      // What the payer typed was read above: a refusal now is the link's or the merchant's, never shown as it is.
      if (isPassingRefusal(error)) throw error;
      // The link may have changed under the payer (deactivated, paid, its price archived): its notice says so.
      const now = await find(link.id);
      const why = now ? await whyUnusable(now.link) : LINK_NOTICES.notFound;
      if (why) answerNotice(ctx, why, now);
      else if (isMerchantSetupRefusal(error)) answerRefused(ctx, LINK_NOTICES.noPaymentMethod, found, error);
      else if (error instanceof WeirError) answerRefused(ctx, LINK_NOTICES.linkSettings, found, error);
      else throw error;
    }
  }

  pages.route(
    {
      method: 'post',
      path: '/:id',
      summary: 'Submit the payment link page',
      description:
        "The page's form, posted as `application/x-www-form-urlencoded` (the only type read: anything else shows the form again saying so). Every problem is shown at once on the form; a valid one opens a checkout session carrying the link and what it collected.",
      params,
      bodyTypes: { 'application/x-www-form-urlencoded': PayerFormSchema },
      produces: 'text/html',
      pages: [
        { status: 303, description: "To the new checkout session's page", redirect: true },
        {
          status: 400,
          description: 'The form again, naming every problem (or why this payment cannot be started)',
        },
        {
          status: 409,
          description:
            "The seller's setup or the link's settings cannot take this payment now (no payment method for the link's currency, one that is broken, a price the session refuses): a page saying so",
        },
        ...unusable,
        compressedPage,
        ...passing,
      ],
    },
    (ctx, { params: { id } }) => submit(ctx, id),
  );

  return router;
}
