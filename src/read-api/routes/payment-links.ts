import Router from '@koa/router';
import { unbillableInterval } from '../../../machines/billing-calendar.ts';
import { paymentLinkAggregate } from '../../../machines/payment-link.aggregate.ts';
import { validatePaymentLink, type NewPaymentLink } from '../../../machines/payment-link.decide.ts';
import {
  PAYMENT_LINK_PRICINGS,
  PRICING_FIELDS,
  type AllowedChain,
  type PaymentLink,
  type PaymentLinkChanges,
  type PaymentLinkPricing,
} from '../../../machines/payment-link.types.ts';
import {
  offerThroughPaymentLink,
  priceAggregate,
  productAggregate,
  type Price,
  type Product,
} from '../../actors/catalog.ts';
import { organizationRecordId } from '../../actors/organization.ts';
import { assertAmountFitsCurrency, assertPriceFitsCurrency } from '../../actors/currency-precision.ts';
import { NO_PAYMENT_METHOD } from '../../actors/invoice-payability.ts';
import {
  offersAsset,
  payableChainIds,
  preferredChainRefusal,
  sessionNetworks,
  walletsInvalid,
} from '../../actors/session-networks.ts';
import { PRICES, PRODUCTS, type PriceDoc, type ProductDoc } from '../../projections/catalog.projection.ts';
import { COLLECTIONS, type OrganizationDoc } from '../../projections/collections.ts';
import { PAYMENT_LINKS, usedUp, type PaymentLinkDoc } from '../../projections/payment-links.projection.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../shared/errors.ts';
import { isUuid } from '../../shared/ids.ts';
import { paymentLinkUrl } from '../../hosted/urls.ts';
import { type ApiContext, type ApiDeps, type ApiState, idsOf } from '../api-context.ts';
import { commandContextOf, commandFor, ownedBy } from '../command.ts';
import { listPage } from '../pagination.ts';
import {
  DeletedMessage,
  idParams,
  invalidFields,
  listOf,
  listQuery,
  notFound,
  queryFilter,
  walletInvalid,
} from '../schema/fields.ts';
import {
  FIXED_ON_LINK,
  PAYMENT_LINK_EXAMPLE,
  PaymentLinkCreate,
  PaymentLinkSchema,
  PaymentLinkUpdate,
  type PaymentLinkCreateBody,
  type PaymentLinkEditable,
} from '../schema/payment-link.ts';
import { schemaRoutes } from '../schema/route.ts';
import { paymentLinkCatalog } from '../payment-link-catalog.ts';

/**
 * The link as the API shows it: the reference's PaymentLinkDto, plus its public `url` and `livemode`.
 *
 * `isActive` is whether payers can use the link now, so a `one_time` link that has been paid shows
 * `false`, and so does a link whose product or price is deleted or inactive (its page says it is
 * not available). The reference describes isActive as "whether the payment link is currently active" and
 * has no other field (no payment count, no status) that could tell a client a link is used up; a
 * link that refuses payers shown as active would mislead every client that checks it. The
 * merchant's own switch stays in the link's events (deactivate, then activate); the count of
 * payments is kept internal, as the reference has no field for it.
 */
export function presentPaymentLink(doc: PaymentLinkDoc, publicUrl: string) {
  const {
    _id,
    deleted: _deleted,
    deletedAt: _deletedAt,
    environment,
    completedPayments: _completedPayments,
    completionsCountedThrough: _countedThrough,
    takesPayments,
    ...link
  } = doc;
  return { ...link, isActive: takesPayments, url: paymentLinkUrl(publicUrl, doc.id), livemode: environment === 'live' };
}

/**
 * A used-up one_time link cannot be switched back on: refused with a 409 before anything is
 * written. The merchant changes its type to `multiple` (then it takes payments again) or makes a new link.
 */
function refuseReopening(link: PaymentLinkDoc, type: PaymentLink['type']): void {
  if (!usedUp({ type, completedPayments: link.completedPayments })) return;
  throw new ConflictError(
    `payment link ${link.id} is one_time and has already been paid, so it cannot take another payment; set its type to multiple to take more payments, or create a new payment link`,
    'payment_link_used',
  );
}

/** What a refusal of `allowedChains` for a broken wallet of the organization starts with. */
const LINK_REFUSED = "allowedChains: the link's sessions would pay into a wallet that is broken: ";

/** Whether `chainIds` allow the same chains as `kept` (in any order). */
const sameChains = (chainIds: readonly number[], kept: readonly AllowedChain[]): boolean => {
  const keptIds = new Set(kept.map((c) => c.chainId));
  return new Set(chainIds).size === keptIds.size && chainIds.every((id) => keptIds.has(id));
};

/** An amount as the link keeps it (10^8-scaled digits); absent stays undefined, null stays null. */
const digits = (amount: bigint | null | undefined) =>
  amount === undefined || amount === null ? amount : amount.toString();

/**
 * What a merchant may set on a link at creation and change later, from a parsed body (absent
 * fields stay undefined). The networks are the environment's, so they are checked here.
 */
function editableFields(body: PaymentLinkEditable, chainIds: number[]): PaymentLinkChanges {
  body.allowedChains?.forEach(({ chainId }, i) => {
    if (!chainIds.includes(chainId))
      throw new ValidationError(
        `allowedChains[${i}].chainId`,
        `${chainId} is not a network of this environment; use one of ${chainIds.join(', ')}`,
      );
  });
  return {
    type: body.type,
    title: body.title,
    description: body.description,
    image: body.image,
    tags: body.tags,
    nameCollection: body.nameCollection,
    emailCollection: body.emailCollection,
    phoneNumberCollection: body.phoneNumberCollection,
    billingAddressCollection: body.billingAddressCollection,
    shippingAddressCollection: body.shippingAddressCollection,
    customFields: body.customFields,
    submitType: body.submitType,
    afterCompletion: body.afterCompletion,
    afterCompletionRedirectUrl: body.afterCompletionRedirectUrl,
    afterCompletionConfirmMsg: body.afterCompletionConfirmMsg,
    allowPromotionCodes: body.allowPromotionCodes,
    allowedChains: body.allowedChains,
    suggestedAmounts: body.suggestedAmounts?.map((amount) => amount.toString()),
    minimumAmount: digits(body.minimumAmount),
    maximumAmount: digits(body.maximumAmount),
    metadata: body.metadata,
  };
}

type PricingFields = Pick<NewPaymentLink, (typeof PRICING_FIELDS)[number]>;
type NewProduct = Omit<Product, 'createdAt' | 'updatedAt' | 'deleted'>;
type NewPrice = Omit<Price, 'createdAt' | 'updatedAt'>;
/** A link's pricing, and the product and price to create for it (when it does not sell an existing one). */
type ResolvedPricing = { fields: PricingFields; product: NewProduct | null; price: NewPrice | null };

const fromPrice = (price: NewPrice): PricingFields => ({
  pricing: price.type === 'recurring' ? 'subscription' : 'fixed',
  priceType: price.type,
  currency: price.currency,
  amount: price.unitAmount,
  priceId: price.id,
  productId: price.productId,
  interval: price.interval,
  intervalCount: price.intervalCount,
});

/**
 * Payment links: create, list (`isActive`, `ids`, `pricing`), read, update, delete, activate and
 * deactivate. A link sells a catalog price: an existing one (`priceId`, or a product's default
 * price by `productId`), or one made from `amount` and a currency. Without a price, the payer
 * enters the amount (a variable-price link, sold as the link's own product).
 */
export function paymentLinkRoutes(deps: ApiDeps): Router<ApiState> {
  const router = new Router<ApiState>({ prefix: '/api/v1/payment-links' });
  const links = deps.readStore.collection<PaymentLinkDoc>(PAYMENT_LINKS);
  const products = deps.readStore.collection<ProductDoc>(PRODUCTS);
  const prices = deps.readStore.collection<PriceDoc>(PRICES);
  const present = (doc: PaymentLinkDoc) => presentPaymentLink(doc, deps.publicUrl);
  const { whyNotSold } = paymentLinkCatalog(deps.readStore);

  /**
   * A link is not switched on while what it sells is gone or off: the API would show it active while
   * its page turns payers away. Refused with a 409 naming what is missing, before anything is written.
   */
  async function refuseUnsold(link: PaymentLinkDoc): Promise<void> {
    const why = await whyNotSold(link);
    if (why === null) return;
    throw new ConflictError(
      `payment link ${link.id} cannot be activated: ${why}; a link sells only an active product and price, so activate them first or create a new payment link`,
      'payment_link_unavailable',
    );
  }
  const chainIdsOf = (ctx: ApiContext) => deps.rail.networks(ctx.state.tenant.environment).map((n) => n.chainId);
  const orgs = deps.readStore.collection<OrganizationDoc>(COLLECTIONS.organizations);

  /**
   * The chains a request allows (`allowedChains`; none: every network) must include one the link's
   * sessions can pay on, and a preferred chain it sets must be one of those (`sessionNetworks`, as a
   * session's and an invoice's are checked): else its page would offer nothing to pay with, or quietly
   * prefer none. Refused with a 400 naming the field; a wallet of the organization that is broken (one
   * failing its checksum there, or every allowed chain's one the rail cannot pay) with the 422 a session
   * of the link would get, naming the wallet, so the payer's page never meets it. What a link already has (`kept`) is not checked
   * again: a body sent back whole repeats it, and a link stored before these checks, or whose wallet
   * went since, keeps working; its sessions drop the preference, as they drop the organization's.
   */
  async function refuseUnpayableChains(
    ctx: ApiContext,
    allowedChains: readonly AllowedChain[] | undefined,
    currency: string,
    kept: readonly AllowedChain[] = [],
  ): Promise<void> {
    if (!allowedChains || allowedChains.length === 0) return;
    const chainIds = allowedChains.map((c) => c.chainId);
    const keptChains = sameChains(chainIds, kept);
    const preferred = allowedChains.filter((c) => c.isPreferred);
    // Two preferred are refused by the link's own rules.
    const newPreferred =
      preferred.length === 1 && !kept.some((c) => c.isPreferred && c.chainId === preferred[0]!.chainId)
        ? preferred[0]!
        : null;
    if (keptChains && !newPreferred) return;
    const { tenant } = ctx.state;
    const org = await orgs.get(organizationRecordId(tenant.organizationId, tenant.environment));
    const networksAllowed = (allowed: readonly number[] | undefined) =>
      sessionNetworks(
        deps.rail,
        tenant.environment,
        org?.withdrawalAddresses ?? [],
        allowed,
        offersAsset(currency, null),
      );
    const networks = networksAllowed(chainIds);
    const payable = payableChainIds(networks);
    // A wallet failing its checksum on a chain the link newly allows refuses every session of the link
    // (a 422, as at session create); one on a chain it already allowed is left as it was stored.
    const keptIds = kept.map((c) => c.chainId);
    const mistyped = networks.filter((n) => n.unpayable?.typo && !keptIds.includes(n.network.chainId));
    if (mistyped.length > 0) throw walletsInvalid(mistyped, LINK_REFUSED);
    if (payable.length === 0 && !keptChains) {
      // Every chain it allows left out for its wallet (one the rail cannot pay): the session's 422 too.
      if (networks.length > 0) throw walletsInvalid(networks, LINK_REFUSED);
      const elsewhere = payableChainIds(networksAllowed(undefined));
      throw new ValidationError(
        'allowedChains',
        `none of chains ${chainIds.join(', ')} can be paid on, so the link's page would offer nothing to pay with (a chain needs a payment method of this organization that can be paid and an asset in ${currency.toUpperCase()}): ${elsewhere.length > 0 ? `allow one of ${elsewhere.join(', ')}, ` : ''}add a wallet address on one with POST /api/v1/organization/withdrawal-addresses, or send no allowedChains (every network)`,
        NO_PAYMENT_METHOD,
      );
    }
    if (!newPreferred || payable.includes(newPreferred.chainId)) return;
    throw preferredChainRefusal({
      chainId: newPreferred.chainId,
      of: 'payment link',
      field: `allowedChains[${allowedChains.indexOf(newPreferred)}].isPreferred`,
      networks,
      currency,
      chainsBy: 'allowedChains',
      hint: ', or prefer none',
    });
  }

  const loadLink = async (ctx: ApiContext, id: string) => {
    const doc = isUuid(id) ? await links.get(id) : null;
    if (!ownedBy(ctx, doc) || doc.deleted) throw new NotFoundError('payment link', id);
    return doc;
  };

  async function findProduct(ctx: ApiContext, id: string, path: string): Promise<Product> {
    const doc = isUuid(id) ? await products.get(id) : null;
    if (!ownedBy(ctx, doc) || doc.deleted)
      throw new ValidationError(path, `product ${id} does not exist`, 'resource_missing');
    if (!doc.isActive) throw new ValidationError(path, `product ${id} is not active`, 'product_inactive');
    return doc;
  }

  async function findPrice(ctx: ApiContext, id: string, path: string): Promise<Price> {
    const doc = isUuid(id) ? await prices.get(id) : null;
    if (!ownedBy(ctx, doc)) throw new ValidationError(path, `price ${id} does not exist`, 'resource_missing');
    if (!doc.isActive) throw new ValidationError(path, `price ${id} is not active`);
    await findProduct(ctx, doc.productId, path);
    assertPriceFitsCurrency(deps.rail, ctx.state.tenant.environment, path, doc);
    return doc;
  }

  /**
   * The amounts a payer may choose among or between (a variable-price link's) are refused finer than
   * the link's currency carries, as a price is (`assertAmountFitsCurrency`), naming each. Only those
   * `changes` set anew: what the link already has (`kept`, sent back whole) is left as it was stored.
   */
  function refuseFinerAmounts(
    ctx: ApiContext,
    changes: Pick<PaymentLinkChanges, 'suggestedAmounts' | 'minimumAmount' | 'maximumAmount'>,
    currency: string,
    kept?: Pick<PaymentLink, 'suggestedAmounts' | 'minimumAmount' | 'maximumAmount'>,
  ): void {
    const fits = (field: string, amount: string | null | undefined, keptAmounts: readonly (string | null)[] = []) => {
      if (amount === null || amount === undefined || keptAmounts.includes(amount)) return;
      assertAmountFitsCurrency(deps.rail, ctx.state.tenant.environment, field, currency, BigInt(amount));
    };
    for (const [i, amount] of (changes.suggestedAmounts ?? []).entries())
      fits(`suggestedAmounts[${i}]`, amount, kept?.suggestedAmounts);
    fits('minimumAmount', changes.minimumAmount, [kept?.minimumAmount ?? null]);
    fits('maximumAmount', changes.maximumAmount, [kept?.maximumAmount ?? null]);
  }

  /** Which price the new link sells, checked against `pricing` when the request names it. Writes nothing. */
  async function resolvePricing(
    ctx: ApiContext,
    body: PaymentLinkCreateBody,
    linkId: string,
  ): Promise<ResolvedPricing> {
    const { tenant } = ctx.state;
    const { pricing: requested, priceId, productId, currency } = body;
    const amount = body.amount?.toString();
    const needCurrency = () =>
      currency ??
      (() => {
        throw new ValidationError(
          'currency',
          'is required with amount, or for a variable-price link',
          'parameter_missing',
        );
      })();
    const newPrice = (product: string, unitAmount: string): NewPrice => {
      assertAmountFitsCurrency(deps.rail, tenant.environment, 'amount', needCurrency(), BigInt(unitAmount));
      return priceRecord(product, unitAmount);
    };
    const priceRecord = (product: string, unitAmount: string): NewPrice => ({
      id: idsOf(ctx)(),
      organizationId: tenant.organizationId,
      environment: tenant.environment,
      productId: product,
      type: 'one_time',
      currency: needCurrency(),
      unitAmount,
      interval: null,
      intervalCount: null,
      isActive: true,
      nickname: null,
      metadata: { paymentLinkId: linkId },
      billingScheme: 'per_unit',
    });
    const ownProduct = (): NewProduct => ({
      id: idsOf(ctx)(),
      organizationId: tenant.organizationId,
      environment: tenant.environment,
      name: body.title,
      description: body.description ?? null,
      isActive: true,
      unitLabel: null,
      url: null,
      images: body.image ? [body.image] : [],
      metadata: { paymentLinkId: linkId },
      visibility: 10,
      defaultPriceId: null,
    });
    const variable = (product: string): PricingFields => ({
      pricing: 'variable',
      priceType: 'one_time',
      currency: needCurrency(),
      amount: null,
      priceId: null,
      productId: product,
      interval: null,
      intervalCount: null,
    });

    let resolved: ResolvedPricing;
    if (priceId !== undefined) {
      if (amount !== undefined)
        throw new ValidationError('amount', 'give priceId or amount, not both', 'parameters_exclusive');
      const price = await findPrice(ctx, priceId, 'priceId');
      if (productId !== undefined && productId !== price.productId)
        throw new ValidationError('productId', `is not the product of price ${price.id}`);
      if (currency !== undefined && currency !== price.currency)
        throw new ValidationError('currency', `does not match the price's currency (${price.currency})`);
      resolved = { fields: fromPrice(price), product: null, price: null };
    } else if (productId !== undefined) {
      const product = await findProduct(ctx, productId, 'productId');
      if (amount !== undefined) {
        const price = newPrice(product.id, amount);
        resolved = { fields: fromPrice(price), product: null, price };
      } else if (requested === 'variable') {
        resolved = { fields: variable(product.id), product: null, price: null };
      } else {
        const price = product.defaultPriceId ? await findPrice(ctx, product.defaultPriceId, 'productId') : null;
        if (!price)
          throw new ValidationError(
            'productId',
            `product ${product.id} has no default price: give amount and currency, or priceId`,
          );
        if (currency !== undefined && currency !== price.currency)
          throw new ValidationError(
            'currency',
            `does not match the product's default price currency (${price.currency})`,
          );
        resolved = { fields: fromPrice(price), product: null, price: null };
      }
    } else if (amount !== undefined) {
      const product = ownProduct();
      const price = newPrice(product.id, amount);
      resolved = { fields: fromPrice(price), product, price };
    } else {
      const product = ownProduct();
      resolved = { fields: variable(product.id), product, price: null };
    }
    checkRequested(requested, resolved.fields.pricing, amount !== undefined);
    // Checked again by the link's own rules; here to name the field that carried the price.
    const { pricing, interval } = resolved.fields;
    const unbillable = pricing === 'subscription' && interval !== null ? unbillableInterval(interval) : null;
    if (unbillable) throw new ValidationError(priceId !== undefined ? 'priceId' : 'productId', unbillable);
    return resolved;
  }

  function checkRequested(
    requested: PaymentLinkPricing | undefined,
    actual: PaymentLinkPricing,
    hasAmount: boolean,
  ): void {
    if (requested === undefined || requested === actual) return;
    if (requested === 'subscription')
      throw new ValidationError(
        'priceId',
        'a subscription link needs a recurring price: give priceId, or productId of a product whose default price is recurring',
      );
    if (requested === 'variable')
      throw new ValidationError(
        hasAmount ? 'amount' : 'priceId',
        'a variable-price link takes no price: the payer enters the amount',
      );
    if (actual === 'variable')
      throw new ValidationError(
        'amount',
        'is required for a fixed-price link: give amount and currency, priceId or productId',
        'parameter_missing',
      );
    throw new ValidationError(
      'priceId',
      'is a recurring price, which makes a subscription link; a fixed-price link needs a one-time price',
    );
  }

  const api = schemaRoutes(router, { tag: 'Payment links', auth: 'secretKey' });
  const params = idParams('payment link');
  const used = {
    status: 409,
    codes: ['payment_link_used'],
    description: 'A one_time link that has been paid cannot take payments again: set its type to multiple',
  };
  const unavailable = {
    status: 409,
    codes: ['payment_link_unavailable'],
    description:
      "The link's product or price is deleted or inactive (at creation: became so while the request ran), so the link cannot be created or activated: the message names it",
  };
  const fieldErrors = invalidFields('parameters_exclusive', 'resource_missing', 'product_inactive', NO_PAYMENT_METHOD);
  const brokenWallet = walletInvalid("the link's sessions, on the `allowedChains` it sets,");
  const unbillablePrice = {
    status: 400,
    codes: ['parameter_invalid'],
    description:
      'A subscription link sells a recurring price billed by the month or the year (monthly, quarterly, half-yearly or annually), as a subscription session does: one billed by the week or the day is refused on `priceId` (or `productId`, for its default price)',
  };

  api.route(
    {
      method: 'post',
      path: '/',
      summary: 'Create a payment link',
      description:
        'Sells a catalog price: `priceId`, a product’s default price (`productId`), or a price made from `amount` and a currency (`currencies`, `preferredCurrency`, or the deprecated `currency`). Without a price the payer enters the amount, within `minimumAmount` and `maximumAmount`. A refused request creates nothing.',
      body: PaymentLinkCreate,
      response: PaymentLinkSchema,
      errors: [fieldErrors, unbillablePrice, brokenWallet, unavailable],
      examples: {
        request: {
          title: 'Concert ticket',
          amount: '2500000000',
          currencies: ['usdc'],
          afterCompletionRedirectUrl: 'https://shop.example/thanks',
        },
        response: PAYMENT_LINK_EXAMPLE,
      },
    },
    async (ctx, { body }) => {
      const { tenant } = ctx.state;
      const id = idsOf(ctx)();
      const edit = editableFields(body, chainIdsOf(ctx));
      const pricing = await resolvePricing(ctx, body, id);
      const afterCompletion =
        edit.afterCompletion ?? (edit.afterCompletionRedirectUrl ? 'redirect' : 'hosted_confirmation');
      const link: NewPaymentLink = {
        id,
        organizationId: tenant.organizationId,
        environment: tenant.environment,
        type: edit.type ?? 'multiple',
        title: body.title,
        description: edit.description ?? null,
        image: edit.image ?? null,
        tags: edit.tags ?? [],
        ...pricing.fields,
        suggestedAmounts: edit.suggestedAmounts ?? [],
        minimumAmount: edit.minimumAmount ?? null,
        maximumAmount: edit.maximumAmount ?? null,
        nameCollection: edit.nameCollection ?? false,
        emailCollection: edit.emailCollection ?? pricing.fields.pricing === 'subscription',
        phoneNumberCollection: edit.phoneNumberCollection ?? false,
        billingAddressCollection: edit.billingAddressCollection ?? false,
        shippingAddressCollection: edit.shippingAddressCollection ?? false,
        customFields: edit.customFields ?? { fields: [] },
        submitType: edit.submitType ?? 'pay',
        afterCompletion,
        afterCompletionRedirectUrl: edit.afterCompletionRedirectUrl ?? null,
        afterCompletionConfirmMsg: edit.afterCompletionConfirmMsg ?? null,
        allowPromotionCodes: edit.allowPromotionCodes ?? false,
        allowedChains: edit.allowedChains ?? [],
        metadata: edit.metadata ?? {},
        isActive: body.isActive ?? true,
      };
      // Every rule is checked before the link's product or price is created, so a refused request writes nothing.
      validatePaymentLink(link);
      refuseFinerAmounts(ctx, link, link.currency);
      await refuseUnpayableChains(ctx, link.allowedChains, link.currency);
      // The read model can lag a delete or deactivation: the link is decided on the catalog's own streams,
      // so such a change is either seen there (409, nothing written) or appended after the link's offer.
      // A new product or price (made for this link) needs no offer; the link's creation below waits for the projections.
      if (!pricing.product)
        await offerThroughPaymentLink(deps.commands, commandContextOf(ctx), {
          paymentLinkId: id,
          productId: link.productId,
          priceId: pricing.price ? null : link.priceId,
        });
      if (pricing.product)
        await commandFor(deps, ctx, productAggregate, pricing.product.id, {
          type: 'CreateProduct',
          product: pricing.product,
        });
      if (pricing.price)
        await commandFor(deps, ctx, priceAggregate, pricing.price.id, { type: 'CreatePrice', price: pricing.price });
      await commandFor(deps, ctx, paymentLinkAggregate, id, { type: 'CreatePaymentLink', link });
      return present((await links.get(id))!);
    },
  );

  api.route(
    {
      method: 'get',
      path: '/',
      summary: 'List payment links',
      description: 'Newest first; `isActive` filters on whether payers can use the link now.',
      query: listQuery({
        ids: queryFilter('Comma-separated payment link ids'),
        isActive: queryFilter('true or false'),
        pricing: queryFilter(`One of ${PAYMENT_LINK_PRICINGS.join(', ')}`),
      }),
      response: listOf(PaymentLinkSchema),
      errors: [invalidFields()],
    },
    (ctx) =>
      listPage(ctx, links, {
        base: { deleted: false },
        // isActive filters on what the API shows as isActive (see presentPaymentLink).
        filters: {
          ids: { field: 'id', kind: 'csv' },
          isActive: { field: 'takesPayments', kind: 'boolean' },
          pricing: { values: PAYMENT_LINK_PRICINGS },
        },
        present,
      }),
  );

  api.route(
    {
      method: 'get',
      path: '/:id',
      summary: 'Read a payment link',
      params,
      response: PaymentLinkSchema,
      errors: [notFound('payment link')],
    },
    async (ctx, { params: { id } }) => present(await loadLink(ctx, id)),
  );

  api.route(
    {
      method: 'put',
      path: '/:id',
      summary: 'Update a payment link',
      description:
        "Only the fields sent change; `null` clears a field. The price is fixed: a body may repeat the link's pricing fields (clients of the reference send the whole link back), but not change them. `isActive` switches the link on or off.",
      params,
      body: PaymentLinkUpdate,
      response: PaymentLinkSchema,
      errors: [fieldErrors, brokenWallet, notFound('payment link'), used, unavailable],
    },
    async (ctx, { params: { id }, body }) => {
      const link = await loadLink(ctx, id);
      for (const key of PRICING_FIELDS) {
        const given = key === 'amount' ? digits(body.amount) : body[key];
        if (given === undefined) continue;
        if (JSON.stringify(given) !== JSON.stringify(link[key])) throw new ValidationError(key, FIXED_ON_LINK);
      }
      const changes = editableFields(body, chainIdsOf(ctx));
      // A fixed or subscription link's own rules refuse these amounts on it at all.
      if (link.pricing === 'variable') refuseFinerAmounts(ctx, changes, link.currency, link);
      await refuseUnpayableChains(ctx, changes.allowedChains, link.currency, link.allowedChains);
      // Switching the after-completion action drops the other action's setting unless the body sets it.
      if (changes.afterCompletion === 'hosted_confirmation' && body.afterCompletionRedirectUrl === undefined)
        changes.afterCompletionRedirectUrl = null;
      if (changes.afterCompletion === 'redirect' && body.afterCompletionConfirmMsg === undefined)
        changes.afterCompletionConfirmMsg = null;
      const { isActive } = body;
      // A whole link sent back repeats isActive: true; that is no change while the merchant's switch is on
      // (a paid one_time link then still shows isActive false). Only switching on a link that was off is checked.
      if (isActive === true && !link.isActive) {
        refuseReopening(link, changes.type ?? link.type);
        await refuseUnsold(link);
      }
      await commandFor(deps, ctx, paymentLinkAggregate, link.id, { type: 'UpdatePaymentLink', changes });
      if (isActive !== undefined)
        await commandFor(deps, ctx, paymentLinkAggregate, link.id, {
          type: isActive ? 'ActivatePaymentLink' : 'DeactivatePaymentLink',
        });
      return present((await links.get(link.id))!);
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/:id',
      summary: 'Delete a payment link',
      description: 'Payers can no longer open it; checkout sessions already opened from it are unchanged.',
      params,
      response: DeletedMessage,
      errors: [notFound('payment link')],
    },
    async (ctx, { params: { id } }) => {
      const link = await loadLink(ctx, id);
      await commandFor(deps, ctx, paymentLinkAggregate, link.id, { type: 'DeletePaymentLink' });
      return { message: `payment link ${link.id} deleted`, statusCode: 200 };
    },
  );

  // The reference uses PUT for these; POST is accepted too, like the other resources' actions.
  for (const [action, type] of [
    ['activate', 'ActivatePaymentLink'],
    ['deactivate', 'DeactivatePaymentLink'],
  ] as const) {
    for (const method of ['put', 'post'] as const) {
      api.route(
        {
          method,
          path: `/:id/${action}`,
          summary: `${type === 'ActivatePaymentLink' ? 'Activate' : 'Deactivate'} a payment link`,
          ...(type === 'ActivatePaymentLink'
            ? {
                description:
                  'A one_time link that has been paid cannot be activated again (409 `payment_link_used`), nor a link whose product or price is deleted or inactive (409 `payment_link_unavailable`, naming it).',
              }
            : {}),
          params,
          response: PaymentLinkSchema,
          errors:
            type === 'ActivatePaymentLink' ? [notFound('payment link'), used, unavailable] : [notFound('payment link')],
        },
        async (ctx, { params: { id } }) => {
          const link = await loadLink(ctx, id);
          if (type === 'ActivatePaymentLink') {
            refuseReopening(link, link.type);
            await refuseUnsold(link);
          }
          await commandFor(deps, ctx, paymentLinkAggregate, link.id, { type });
          return present((await links.get(link.id))!);
        },
      );
    }
  }

  return router;
}
