import Router from '@koa/router';
import type { PaymentLink } from '../../../machines/payment-link.types.ts';
import type { CreateCheckoutSession } from '../../actors/create-checkout-session.ts';
import { organizationRecordId } from '../../actors/organization.ts';
import { offersAsset, payableSessionNetworks, sessionNetworks } from '../../actors/session-networks.ts';
import { readPayerForm, withPressedAmount, type FormProblem, type PayerForm } from '../../hosted/payment-link-form.ts';
import {
  PAYMENT_LINK_PAGE_HEADERS,
  renderPaymentLinkNotice,
  renderPaymentLinkPage,
} from '../../hosted/payment-link-page.ts';
import { paymentLinkCatalog } from '../payment-link-catalog.ts';
import { COLLECTIONS, type OrganizationDoc } from '../../projections/collections.ts';
import { PAYMENT_LINKS, usedUp, type PaymentLinkDoc } from '../../projections/payment-links.projection.ts';
import { ValidationError } from '../../shared/errors.ts';
import { isUuid } from '../../shared/ids.ts';
import type { ApiContext, ApiDeps, ApiState } from '../api-context.ts';
import { readUrlEncodedForm } from '../form-body.ts';
import { isMerchantSetupRefusal } from '../merchant-setup.ts';
import { CheckoutSessionCreate } from '../schema/checkout-session-create.ts';
import { idParams } from '../schema/fields.ts';
import { PayerFormSchema } from '../schema/hosted.ts';
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

/**
 * The public page of a payment link, `/pay/{id}`. GET shows the form of what the link collects;
 * POST checks the payer's input and either shows the form again with every problem (400), or
 * opens a checkout session carrying `paymentLinkId` and the collected data and sends the payer
 * to it (303). An unknown or deleted link is a 404 page, an inactive one a 410 page, and so is a
 * `one_time` link that has been paid (a 410 page saying it has been used) and one whose product or
 * price is gone or inactive (GET and POST alike, never the session's field errors). A submission the
 * merchant's setup cannot take (no wallet for the currency, a broken one) is a 409 page saying the link
 * cannot be paid right now, never the session's refusal, which names the merchant's wallets.
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
  deps: ApiDeps & { createCheckoutSession: CreateCheckoutSession },
): Router<ApiState> {
  const router = new Router<ApiState>({ prefix: '/pay' });
  const links = deps.readStore.collection<PaymentLinkDoc>(PAYMENT_LINKS);
  const orgs = deps.readStore.collection<OrganizationDoc>(COLLECTIONS.organizations);

  // A link made before deactivating or deleting what active links sell was refused may outlive it.
  const { whyNotSold } = paymentLinkCatalog(deps.readStore);

  const html = (ctx: ApiContext, status: number, body: string) => {
    ctx.status = status;
    ctx.type = 'text/html; charset=utf-8';
    ctx.set(PAYMENT_LINK_PAGE_HEADERS);
    ctx.body = body;
  };

  /** The link and its organization when payers may use it; otherwise answers with a notice page and gives null. */
  async function usable(
    ctx: ApiContext,
    id: string,
  ): Promise<{ link: PaymentLinkDoc; org: OrganizationDoc | null } | null> {
    const link = isUuid(id) ? await links.get(id) : null;
    if (!link || link.deleted) {
      html(
        ctx,
        404,
        renderPaymentLinkNotice(
          null,
          'Payment link not found',
          'This payment link does not exist. Check the address, or ask the seller for a new link.',
        ),
      );
      return null;
    }
    const org = await orgs.get(organizationRecordId(link.organizationId, link.environment));
    if (usedUp(link)) {
      html(
        ctx,
        410,
        renderPaymentLinkNotice(
          org,
          'Payment link already used',
          'This payment link has already been used: it takes one payment only, and that payment has been made. Ask the seller for a new link.',
        ),
      );
      return null;
    }
    // The merchant's switch: takesPayments is also false for the reasons told apart above and below.
    if (!link.isActive) {
      html(
        ctx,
        410,
        renderPaymentLinkNotice(
          org,
          'Payment link inactive',
          'This payment link is not active, so it cannot take payments. Ask the seller for a new link.',
        ),
      );
      return null;
    }
    if ((await whyNotSold(link)) !== null) {
      html(
        ctx,
        410,
        renderPaymentLinkNotice(
          org,
          'Payment link not available',
          'This payment link is not available: what it sells is no longer offered, so it cannot take payments. Ask the seller for a new link.',
        ),
      );
      return null;
    }
    return { link, org };
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

  pages.route(
    {
      method: 'get',
      path: '/:id',
      summary: 'The payment link page',
      description:
        'The form of what the link collects: the amount (when the payer chooses it), contact details, addresses, custom fields.',
      params,
      produces: 'text/html',
      pages: [{ status: 200, description: 'The payment link page' }, ...unusable],
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
    let form: PayerForm = {};
    try {
      form = withPressedAmount(await readUrlEncodedForm(ctx));
      const read = readPayerForm(link, form, currencyDecimals(link, org));
      if (!read.ok) {
        refuse(form, read.problems);
        return;
      }
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
      // The merchant's setup takes no payment now (no wallet for the link's currency, one that is broken):
      // the payer did nothing wrong, and is not shown the refusal, which names the merchant's wallets.
      if (isMerchantSetupRefusal(error))
        html(
          ctx,
          409,
          renderPaymentLinkNotice(
            org,
            'Payment link cannot be paid right now',
            'This payment link cannot be paid online right now: the seller has no way set up to take this payment. Please contact them.',
          ),
        );
      // The link's price cannot be paid as it stands (an inactive product, an amount no asset can carry exactly).
      else if (error instanceof ValidationError) refuse(form, [], `This payment cannot be started: ${error.message}`);
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
            "The seller's setup cannot take this payment now (no payment method for the link's currency, or one that is broken): a page saying so",
        },
        ...unusable,
      ],
    },
    (ctx, { params: { id } }) => submit(ctx, id),
  );

  return router;
}
