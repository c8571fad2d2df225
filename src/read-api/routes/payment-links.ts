import Router from '@koa/router';
import { paymentLinkAggregate } from '../../../machines/payment-link.aggregate.ts';
import {
  MAX_CUSTOM_FIELDS,
  MAX_DROPDOWN_OPTIONS,
  MAX_SUGGESTED_AMOUNTS,
  validatePaymentLink,
  type NewPaymentLink,
} from '../../../machines/payment-link.decide.ts';
import type { CustomFieldLabel, CustomFieldType, LengthBounds } from '../../../machines/collected-data.types.ts';
import {
  PAYMENT_LINK_PRICINGS,
  PRICING_FIELDS,
  type AllowedChain,
  type PaymentLink,
  type PaymentLinkChanges,
  type PaymentLinkCustomField,
  type PaymentLinkPricing,
} from '../../../machines/payment-link.types.ts';
import { priceAggregate, productAggregate, type Price, type Product } from '../../actors/catalog.ts';
import { CURRENCIES } from '../../actors/line-items.ts';

type Currency = (typeof CURRENCIES)[number];
import { PRICES, PRODUCTS, type PriceDoc, type ProductDoc } from '../../projections/catalog.projection.ts';
import { PAYMENT_LINKS, usedUp, type PaymentLinkDoc } from '../../projections/payment-links.projection.ts';
import { DECIMAL } from '../../shared/decimal.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../shared/errors.ts';
import { isUuid } from '../../shared/ids.ts';
import {
  asObject,
  nullableString,
  optionalArray,
  optionalBoolean,
  optionalEnum,
  optionalInteger,
  optionalMetadata,
  optionalObject,
  optionalString,
  optionalUrl,
  requiredAmount,
  requiredString,
  type Input,
} from '../../shared/input.ts';
import { type ApiContext, type ApiDeps, type ApiState, idsOf } from '../api-context.ts';
import { commandFor, ownedBy } from '../command.ts';
import { listPage } from '../pagination.ts';
import { paymentLinkUrl } from '../../hosted/urls.ts';

const MAX_TAGS = 10;
const CUSTOM_FIELD_TYPES: readonly CustomFieldType[] = ['text', 'numeric', 'dropdown'];

/**
 * The link as the API shows it: the reference's PaymentLinkDto, plus its public `url` and `livemode`.
 *
 * `isActive` is whether payers can use the link now, so a `one_time` link that has been paid shows
 * `false`. The reference describes isActive as "whether the payment link is currently active" and
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

const field = (path: string, key: string) => (path ? `${path}.${key}` : key);

/** An amount (10^8-scaled digits, string or number); absent = undefined, null = null. */
function nullableAmount(o: Input, key: string, path = ''): string | null | undefined {
  if (!(key in o)) return undefined;
  if (o[key] === null) return null;
  return requiredAmount(o, key, path).toString();
}

function nullableUrl(o: Input, key: string): string | null | undefined {
  if (!(key in o)) return undefined;
  if (o[key] === null) return null;
  return optionalUrl(o, key) ?? null;
}

function stringItems(o: Input, key: string, options: { max: number; itemMax: number }): string[] | undefined {
  return optionalArray(o, key, '', { max: options.max })?.map((item, i) => {
    if (typeof item !== 'string' || item.trim().length === 0)
      throw new ValidationError(`${key}[${i}]`, 'must be a non-empty string');
    if (item.length > options.itemMax)
      throw new ValidationError(`${key}[${i}]`, `must be at most ${options.itemMax} characters`);
    return item;
  });
}

/** A decimal bound of a numeric field, sent as a number or a decimal string. */
function decimalBound(o: Input, key: string, path: string): string | null {
  const v = o[key];
  if (v === undefined || v === null) return null;
  const text = typeof v === 'number' && Number.isFinite(v) ? String(v) : v;
  if (typeof text !== 'string' || !DECIMAL.test(text) || text.length > 40)
    throw new ValidationError(field(path, key), 'must be a number such as 10 or 2.5');
  return text;
}

function lengthBounds(o: Input | undefined, path: string): LengthBounds {
  return {
    minimumLength: o ? (optionalInteger(o, 'minimumLength', path, { min: 0 }) ?? null) : null,
    maximumLength: o ? (optionalInteger(o, 'maximumLength', path, { min: 0 }) ?? null) : null,
  };
}

/** The reference's label, `{type: "custom", custom: "Company"}`; a plain string is taken as its text. */
function labelOf(o: Input, path: string): CustomFieldLabel {
  if (typeof o.label === 'string') return { type: 'custom', custom: requiredString(o, 'label', path, { max: 50 }) };
  const labelPath = field(path, 'label');
  const label = optionalObject(o, 'label', path);
  if (!label)
    throw new ValidationError(labelPath, 'is required: {"type": "custom", "custom": "Company"}', 'parameter_missing');
  optionalEnum(label, 'type', ['custom'] as const, labelPath);
  return { type: 'custom', custom: requiredString(label, 'custom', labelPath, { max: 50 }) };
}

/** One custom field, in the reference's shape; its rules sit under a key named by its type. */
function customField(raw: unknown, path: string): PaymentLinkCustomField {
  const o = asObject(raw, path);
  const type = optionalEnum(o, 'type', CUSTOM_FIELD_TYPES, path);
  if (!type)
    throw new ValidationError(
      field(path, 'type'),
      `is required: one of ${CUSTOM_FIELD_TYPES.join(', ')}`,
      'parameter_missing',
    );
  for (const other of CUSTOM_FIELD_TYPES) {
    if (other !== type && o[other] !== undefined && o[other] !== null)
      throw new ValidationError(field(path, other), `is only for ${other} fields; this field is ${type}`);
  }
  const base = {
    key: requiredString(o, 'key', path, { max: 40 }),
    label: labelOf(o, path),
    optional: optionalBoolean(o, 'optional', path) ?? false,
  };
  const rules = optionalObject(o, type, path);
  const rulesPath = field(path, type);
  switch (type) {
    case 'text':
      return { ...base, type, text: lengthBounds(rules, rulesPath) };
    case 'numeric':
      return {
        ...base,
        type,
        numeric: {
          ...lengthBounds(rules, rulesPath),
          minimum: rules ? decimalBound(rules, 'minimum', rulesPath) : null,
          maximum: rules ? decimalBound(rules, 'maximum', rulesPath) : null,
        },
      };
    case 'dropdown': {
      const options = rules ? optionalArray(rules, 'options', rulesPath, { max: MAX_DROPDOWN_OPTIONS }) : undefined;
      if (!options)
        throw new ValidationError(
          field(rulesPath, 'options'),
          'is required: [{"label": "Small", "value": "s"}]',
          'parameter_missing',
        );
      return {
        ...base,
        type,
        dropdown: {
          options: options.map((option, i) => {
            const p = `${rulesPath}.options[${i}]`;
            const item = asObject(option, p);
            return {
              label: requiredString(item, 'label', p, { max: 100 }),
              value: requiredString(item, 'value', p, { max: 100 }),
            };
          }),
        },
      };
    }
  }
}

/** `customFields: {fields: […]}` as in the reference; null clears. */
function customFieldsOf(body: Input): PaymentLink['customFields'] | undefined {
  if (!('customFields' in body)) return undefined;
  if (body.customFields === null) return { fields: [] };
  const wrapper = asObject(body.customFields, 'customFields');
  const fields = optionalArray(wrapper, 'fields', 'customFields', { max: MAX_CUSTOM_FIELDS }) ?? [];
  return { fields: fields.map((raw, i) => customField(raw, `customFields.fields[${i}]`)) };
}

/** What a merchant may set on a link at creation and change later; absent fields are undefined. */
function editableFields(body: Input, chainIds: number[]): PaymentLinkChanges {
  const allowedChains = optionalArray(body, 'allowedChains', '', { max: 50 })?.map((raw, i): AllowedChain => {
    const path = `allowedChains[${i}]`;
    const item = asObject(raw, path);
    const chainId = optionalInteger(item, 'chainId', path, { min: 1 });
    if (chainId === undefined) throw new ValidationError(`${path}.chainId`, 'is required', 'parameter_missing');
    if (!chainIds.includes(chainId))
      throw new ValidationError(
        `${path}.chainId`,
        `${chainId} is not a network of this environment; use one of ${chainIds.join(', ')}`,
      );
    return { chainId, isPreferred: optionalBoolean(item, 'isPreferred', path) ?? false };
  });
  const suggestedAmounts = optionalArray(body, 'suggestedAmounts', '', { max: MAX_SUGGESTED_AMOUNTS })?.map(
    (amount, i) => requiredAmount({ [`suggestedAmounts[${i}]`]: amount }, `suggestedAmounts[${i}]`).toString(),
  );
  return {
    type: optionalEnum(body, 'type', ['one_time', 'multiple'] as const),
    title: optionalString(body, 'title', '', { min: 1, max: 250 }),
    description: nullableString(body, 'description', 2000),
    image: nullableUrl(body, 'image'),
    tags: stringItems(body, 'tags', { max: MAX_TAGS, itemMax: 50 }),
    nameCollection: optionalBoolean(body, 'nameCollection'),
    emailCollection: optionalBoolean(body, 'emailCollection'),
    phoneNumberCollection: optionalBoolean(body, 'phoneNumberCollection'),
    billingAddressCollection: optionalBoolean(body, 'billingAddressCollection'),
    shippingAddressCollection: optionalBoolean(body, 'shippingAddressCollection'),
    customFields: customFieldsOf(body),
    submitType: optionalEnum(body, 'submitType', ['pay', 'book', 'donate'] as const),
    afterCompletion: optionalEnum(body, 'afterCompletion', ['redirect', 'hosted_confirmation'] as const),
    afterCompletionRedirectUrl: nullableUrl(body, 'afterCompletionRedirectUrl'),
    afterCompletionConfirmMsg: nullableString(body, 'afterCompletionConfirmMsg', 500),
    allowPromotionCodes: optionalBoolean(body, 'allowPromotionCodes'),
    allowedChains,
    suggestedAmounts: 'suggestedAmounts' in body && body.suggestedAmounts === null ? [] : suggestedAmounts,
    minimumAmount: nullableAmount(body, 'minimumAmount'),
    maximumAmount: nullableAmount(body, 'maximumAmount'),
    metadata: 'metadata' in body && body.metadata === null ? {} : optionalMetadata(body, 'metadata'),
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
 * price by `productId`), or one made from `amount` and `currency`. Without a price, the payer
 * enters the amount (a variable-price link, sold as the link's own product).
 */
export function paymentLinkRoutes(deps: ApiDeps): Router<ApiState> {
  const router = new Router<ApiState>({ prefix: '/api/v1/payment-links' });
  const links = deps.readStore.collection<PaymentLinkDoc>(PAYMENT_LINKS);
  const products = deps.readStore.collection<ProductDoc>(PRODUCTS);
  const prices = deps.readStore.collection<PriceDoc>(PRICES);
  const present = (doc: PaymentLinkDoc) => presentPaymentLink(doc, deps.publicUrl);
  const chainIdsOf = (ctx: ApiContext) => deps.rail.networks(ctx.state.tenant.environment).map((n) => n.chainId);

  const loadLink = async (ctx: ApiContext) => {
    const id = ctx.params.id!;
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
    return doc;
  }

  /**
   * The link's currency: the reference's `currencies` (and `preferredCurrency`, which must be one of
   * them), or the deprecated `currency`. A Weir price has one currency, so a list of several sells in
   * the preferred one (else the first); the payer still picks any asset of it on any chain.
   */
  function linkCurrency(body: Input): Currency | undefined {
    const listed = optionalArray(body, 'currencies', '', { min: 1, max: CURRENCIES.length });
    const currencies = listed?.map((value, i) => {
      if (typeof value !== 'string' || !(CURRENCIES as readonly string[]).includes(value))
        throw new ValidationError(`currencies[${i}]`, `must be one of ${CURRENCIES.join(', ')}`);
      return value as Currency;
    });
    const preferred = optionalEnum(body, 'preferredCurrency', CURRENCIES);
    const deprecated = optionalEnum(body, 'currency', CURRENCIES);
    if (currencies && preferred && !currencies.includes(preferred))
      throw new ValidationError('preferredCurrency', `must be one of currencies (${currencies.join(', ')})`);
    if (currencies && deprecated && !currencies.includes(deprecated))
      throw new ValidationError('currency', `must be one of currencies (${currencies.join(', ')})`);
    return deprecated ?? preferred ?? currencies?.[0];
  }

  /** Which price the new link sells, checked against `pricing` when the request names it. Writes nothing. */
  async function resolvePricing(ctx: ApiContext, body: Input, linkId: string, title: string): Promise<ResolvedPricing> {
    const { tenant } = ctx.state;
    const requested = optionalEnum(body, 'pricing', PAYMENT_LINK_PRICINGS);
    const priceId = optionalString(body, 'priceId', '', { max: 64 });
    const productId = optionalString(body, 'productId', '', { max: 64 });
    const amount = nullableAmount(body, 'amount') ?? undefined;
    const currency = linkCurrency(body);
    const needCurrency = () =>
      currency ??
      (() => {
        throw new ValidationError(
          'currency',
          'is required with amount, or for a variable-price link',
          'parameter_missing',
        );
      })();
    const newPrice = (product: string, unitAmount: string): NewPrice => ({
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
      name: title,
      description: optionalString(body, 'description', '', { max: 2000 }) ?? null,
      isActive: true,
      unitLabel: null,
      url: null,
      images: typeof body.image === 'string' ? [body.image] : [],
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

  router.post('/', async (ctx) => {
    const body = asObject(ctx.state.body, '');
    const { tenant } = ctx.state;
    const id = idsOf(ctx)();
    const title = requiredString(body, 'title', '', { max: 250 });
    const edit = editableFields(body, chainIdsOf(ctx));
    const pricing = await resolvePricing(ctx, body, id, title);
    const afterCompletion =
      edit.afterCompletion ?? (edit.afterCompletionRedirectUrl ? 'redirect' : 'hosted_confirmation');
    const link: NewPaymentLink = {
      id,
      organizationId: tenant.organizationId,
      environment: tenant.environment,
      type: edit.type ?? 'multiple',
      title,
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
      isActive: optionalBoolean(body, 'isActive') ?? true,
    };
    // Every rule is checked before the link's product or price is created, so a refused request writes nothing.
    validatePaymentLink(link);
    if (pricing.product)
      await commandFor(deps, ctx, productAggregate, pricing.product.id, {
        type: 'CreateProduct',
        product: pricing.product,
      });
    if (pricing.price)
      await commandFor(deps, ctx, priceAggregate, pricing.price.id, { type: 'CreatePrice', price: pricing.price });
    await commandFor(deps, ctx, paymentLinkAggregate, id, { type: 'CreatePaymentLink', link });
    ctx.body = present((await links.get(id))!);
  });

  router.get('/', async (ctx) => {
    ctx.body = await listPage(ctx, links, {
      base: { deleted: false },
      // isActive filters on what the API shows as isActive (see presentPaymentLink).
      filters: {
        ids: { field: 'id', kind: 'csv' },
        isActive: { field: 'takesPayments', kind: 'boolean' },
        pricing: { values: PAYMENT_LINK_PRICINGS },
      },
      present,
    });
  });

  router.get('/:id', async (ctx) => {
    ctx.body = present(await loadLink(ctx));
  });

  /**
   * Changes what the body names. The price is fixed: a body may repeat the link's pricing fields
   * (clients of the reference send the whole link), but not change them.
   */
  router.put('/:id', async (ctx) => {
    const link = await loadLink(ctx);
    const body = asObject(ctx.state.body, '');
    for (const key of PRICING_FIELDS) {
      if (!(key in body)) continue;
      const given = key === 'amount' ? nullableAmount(body, key) : body[key];
      if (JSON.stringify(given) !== JSON.stringify(link[key]))
        throw new ValidationError(key, 'cannot be changed on a payment link; create a new payment link instead');
    }
    const changes = editableFields(body, chainIdsOf(ctx));
    // Switching the after-completion action drops the other action's setting unless the body sets it.
    if (changes.afterCompletion === 'hosted_confirmation' && !('afterCompletionRedirectUrl' in body))
      changes.afterCompletionRedirectUrl = null;
    if (changes.afterCompletion === 'redirect' && !('afterCompletionConfirmMsg' in body))
      changes.afterCompletionConfirmMsg = null;
    const isActive = optionalBoolean(body, 'isActive');
    if (isActive === true) refuseReopening(link, changes.type ?? link.type);
    await commandFor(deps, ctx, paymentLinkAggregate, link.id, { type: 'UpdatePaymentLink', changes });
    if (isActive !== undefined)
      await commandFor(deps, ctx, paymentLinkAggregate, link.id, {
        type: isActive ? 'ActivatePaymentLink' : 'DeactivatePaymentLink',
      });
    ctx.body = present((await links.get(link.id))!);
  });

  router.delete('/:id', async (ctx) => {
    const link = await loadLink(ctx);
    await commandFor(deps, ctx, paymentLinkAggregate, link.id, { type: 'DeletePaymentLink' });
    ctx.body = { message: `payment link ${link.id} deleted`, statusCode: 200 };
  });

  // The reference uses PUT for these; POST is accepted too, like the other resources' actions.
  for (const [action, type] of [
    ['activate', 'ActivatePaymentLink'],
    ['deactivate', 'DeactivatePaymentLink'],
  ] as const) {
    const handler = async (ctx: ApiContext) => {
      const link = await loadLink(ctx);
      if (type === 'ActivatePaymentLink') refuseReopening(link, link.type);
      await commandFor(deps, ctx, paymentLinkAggregate, link.id, { type });
      ctx.body = present((await links.get(link.id))!);
    };
    router.put(`/:id/${action}`, handler);
    router.post(`/:id/${action}`, handler);
  }

  return router;
}
