import { checkoutSessionAggregate } from '../../machines/checkout-session.aggregate.ts';
import type { CheckoutSession, SessionAddress } from '../../machines/checkout-session.types.ts';
import type { CollectedData } from '../../machines/collected-data.types.ts';
import type { GasFeeQuoter } from '../chain-ingest/gas-fee.ts';
import type { Rail } from '../chain-ingest/rail.ts';
import type { Environment } from '../event-store/event-store.ts';
import { checkoutPageUrl } from '../hosted/urls.ts';
import { COLLECTIONS, type OrganizationDoc } from '../projections/collections.ts';
import { CUSTOMERS, type CustomerDoc } from '../projections/customers.projection.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import type { Clock } from '../shared/clock.ts';
import { ValidationError } from '../shared/errors.ts';
import { deterministicId, newId, type IdSource } from '../shared/ids.ts';
import { MAX_AMOUNT, toChainUnits } from '../shared/money.ts';
import { taxDecimals } from '../shared/tax.ts';
import type { CheckoutSessionRequest } from '../read-api/schema/checkout-session-create.ts';
import { organizationRecordId } from './organization.ts';
import type { CommandHandler } from './command-handler.ts';
import { customerAggregate, customerFromDetails } from './customer.ts';
import { lineTaxes } from './line-taxes.ts';
import type { LineItemResolver, Resolved } from './line-items.ts';
import {
  offersAsset,
  payableChainIds,
  preferredChainRefusal,
  type SessionNetwork,
  sessionNetworks,
  walletsInvalid,
} from './session-networks.ts';
import { subscriptionIdOfSession, subscriptionItemsOf } from './subscription-items.ts';
import { requireTenantCustomer } from './tenant-customer.ts';

export const DEFAULT_SESSION_LIFETIME_MS = 60 * 60 * 1000;
const MIN_LIFETIME_MS = 60 * 1000;
const MAX_LIFETIME_MS = 30 * 24 * 60 * 60 * 1000;
export type CreateCheckoutSession = (
  request: CheckoutSessionRequest,
  tenant: { organizationId: string; environment: Environment; actor: string; clientAddress?: string },
  extra?: {
    paymentLinkId?: string;
    invoiceId?: string;
    /** The subscription an invoice's session bills (its invoice's); a `mode: subscription` session names the one it creates. */
    subscriptionId?: string;
    /** The only assets offered (an invoice's `paymentMethods.assetIds`); empty or absent: every asset of the allowed chains. */
    assetIds?: readonly string[];
    collected?: CollectedData;
    /** The customer the system names (an invoice's, checked when the invoice was written), taken as given. */
    customerId?: string;
    /** Ids for the session and the prices and products it creates (an API request's, see `ApiState.newId`); default `newId`. */
    newId?: IdSource;
  },
) => Promise<{ session: CheckoutSession; position: bigint | null }>;

/**
 * A payment session bills once: a recurring price in it would be shown as billed "every month" and
 * never billed again. Refused, as Stripe does, naming the line's price field. An invoice's session
 * (one inline one-time line, even for a recurring invoice) is never refused here.
 */
function assertOneTimeLines(request: CheckoutSessionRequest['lineItems'], items: readonly Resolved[]): void {
  for (const [index, item] of items.entries()) {
    if (item.price.type !== 'recurring') continue;
    const line = request.data[index]!;
    const form = 'priceId' in line ? 'priceId' : 'price' in line ? 'price' : 'priceData';
    const count = item.price.intervalCount ?? 1;
    const every = count === 1 ? `every ${item.price.interval}` : `every ${count} ${item.price.interval}s`;
    throw new ValidationError(
      `lineItems.data[${index}].${form}`,
      `is a recurring price (billed ${every}), and a payment session bills once: use mode subscription to bill it every period, or a one-time price`,
    );
  }
}

/**
 * Takes a request whose fields the schema checked (`CheckoutSessionCreate`), checks it against the
 * organization, its customers, prices and tax rates and the clock before writing anything, then records the
 * session with its deposit addresses: one per offered asset on every network where the
 * organization has a payment method (wallet) and the request allows the chain (an invoice's
 * session offers only the invoice's assets, when it names some). A payment method its rail cannot
 * pay out to (stored before the rail refused it) leaves its network out; when that leaves no
 * network for the session, a 422 names it and how to correct it.
 *
 * Customers: a `customerId` in the request must name one of the tenant's customers in its
 * environment, not deleted (else a 400 naming `customerId`); an invoice's session is given its
 * customer by the system (`extra.customerId`). A subscription bills its renewals by invoices
 * mailed to its customer: with `customerId` it is that one; with `customerData.email` the
 * subscription billing creates the customer from it (as from the email a payment link page
 * collects); with neither, the checkout page asks the payer's email before a payment method can
 * be chosen, and the customer and subscription are created from it then. With `customerCreation: always` and no `customerId`, a payment session also
 * gets a customer, created from `customerData.email` with the session (`if_required`, the
 * default, creates none for a payment). `customerUpdate` says which details the session collects
 * are copied onto the `customerId` customer when it completes (`workflows/customer-checkout-updates.ts`).
 */
export function createCheckoutSessionCreator(deps: {
  clock: Clock;
  readStore: ReadStore;
  commands: CommandHandler;
  rail: Rail;
  lineItems: LineItemResolver;
  publicUrl: string;
  gasFees: GasFeeQuoter;
}): CreateCheckoutSession {
  const orgs = deps.readStore.collection<OrganizationDoc>(COLLECTIONS.organizations);
  const customers = deps.readStore.collection<CustomerDoc>(CUSTOMERS);

  return async (request, tenant, extra = {}) => {
    const nowMs = deps.clock.now();
    const now = new Date(nowMs).toISOString();
    const org = await orgs.get(organizationRecordId(tenant.organizationId, tenant.environment));
    if (!org) throw new ValidationError(null, 'organization not found for this key');
    if (org.withdrawalAddresses.length === 0) {
      throw new ValidationError(
        'paymentSetting',
        'the organization has no payment method; add a wallet address with POST /api/v1/organization/withdrawal-addresses before creating checkout sessions',
        'payment_method_not_available',
      );
    }

    const { mode, customerCreation, customerData } = request;
    const requestedCustomerId = request.customerId;
    if (requestedCustomerId !== undefined) await requireTenantCustomer(customers, tenant, requestedCustomerId);
    const customerId = extra.customerId ?? requestedCustomerId ?? null;
    // It updates an existing customer when the session completes: only one the request names.
    if (request.customerUpdate && requestedCustomerId === undefined) {
      throw new ValidationError(
        'customerUpdate',
        'is only allowed with customerId: it updates that existing customer when the session completes',
        'parameter_missing',
      );
    }
    if (!customerId && !customerData?.email && customerCreation === 'always') {
      throw new ValidationError(
        'customerData.email',
        'is required with customerCreation always when no customerId is given: the customer is created from it',
        'parameter_missing',
      );
    }
    let expiresAtMs = nowMs + DEFAULT_SESSION_LIFETIME_MS;
    if (request.expiresAt !== undefined) {
      const parsed = Date.parse(request.expiresAt);
      if (parsed < nowMs + MIN_LIFETIME_MS)
        throw new ValidationError('expiresAt', 'must be at least one minute in the future');
      if (parsed > nowMs + MAX_LIFETIME_MS)
        throw new ValidationError('expiresAt', 'must be at most 30 days in the future');
      expiresAtMs = parsed;
    }

    const setting = request.paymentSetting;
    const allowedChainIds = setting?.allowedChains?.map((c) => c.chainId);
    const allowSwap = setting?.allowSwap ?? false;
    const allowFiatPayment = setting?.allowFiatPayment ?? false;

    const nextId = extra.newId ?? newId;
    const items = await deps.lineItems.resolve(request.lineItems, tenant, now, nextId);
    const currency = items[0]!.price.currency;
    const onlyAssets = extra.assetIds?.length ? extra.assetIds : null;
    // The networks the session pays to, each with the assets it offers there: one list for the preferred chain's check and the addresses.
    const networks = sessionNetworks(
      deps.rail,
      tenant.environment,
      org.withdrawalAddresses,
      allowedChainIds,
      offersAsset(currency, onlyAssets),
    );
    // A preferred network the session never offers would put nothing first on its page. The API request
    // naming one is refused; a payer opening an invoice's or a link's page is not, for a setting that
    // went stale since (a payment method removed): the session then simply prefers none. Offered: allowed,
    // with a payment method it can pay and an asset the session offers (in its currency); with none,
    // the wallets' or the lines' refusal says why.
    const offeredChains = payableChainIds(networks);
    const sentPreferred = setting?.preferredChainId;
    const forPayer = extra.invoiceId !== undefined || extra.paymentLinkId !== undefined;
    if (sentPreferred !== undefined && offeredChains.length > 0 && !offeredChains.includes(sentPreferred) && !forPayer)
      throw preferredChainRefusal({
        chainId: sentPreferred,
        of: 'session',
        networks,
        currency,
        chainsBy: allowedChainIds ? 'paymentSetting.allowedChains' : null,
        hint: ', or leave it out',
      });
    // The organization's default only where the session offers it, as a sent one.
    const preferred = sentPreferred ?? org.paymentSetting.preferredChainId;
    const preferredChainId = preferred != null && offeredChains.includes(preferred) ? preferred : null;
    if (mode === 'subscription') subscriptionItemsOf(items);
    else assertOneTimeLines(request.lineItems, items);
    const amountSubtotal = items.reduce((sum, i) => sum + BigInt(i.price.unitAmount) * BigInt(i.quantity), 0n);
    if (amountSubtotal === 0n) throw new ValidationError('lineItems', 'the total amount must be greater than zero');
    const taxes = await lineTaxes(
      deps.readStore,
      tenant,
      request.taxRateIds,
      items.map((item) => ({
        amount: BigInt(item.price.unitAmount) * BigInt(item.quantity),
        taxRateIds: item.taxRateIds,
      })),
      taxDecimals(deps.rail.networks(tenant.environment), currency),
    );
    if (taxes && mode === 'subscription')
      throw new ValidationError(
        'taxRateIds',
        'is not supported on a subscription session: its renewal invoices would bill without the tax',
      );
    const amountTax = taxes?.reduce((sum, t) => sum + t.amountTax, 0n) ?? 0n;
    const amountDue = amountSubtotal + (taxes?.reduce((sum, t) => sum + t.amountExclusive, 0n) ?? 0n);
    if (amountDue > MAX_AMOUNT)
      throw new ValidationError('lineItems', 'the total amount is larger than 9223372036854775807', 'amount_too_large');

    const id = nextId();
    const addresses: SessionAddress[] = [];
    const unrepresentable: string[] = [];
    /** Payment methods stored before their rail refused such addresses: their networks are left out. */
    const unpayable: SessionNetwork[] = [];
    for (const sessionNetwork of networks) {
      const { network, wallet, assets } = sessionNetwork;
      // A checksum that fails (stored before Weir checked them) is a likely typo, never paid into.
      if (sessionNetwork.unpayable?.typo) throw walletsInvalid([sessionNetwork]);
      if (sessionNetwork.unpayable) {
        unpayable.push(sessionNetwork);
        continue;
      }
      for (const asset of assets) {
        try {
          toChainUnits(amountDue, asset.decimals);
        } catch {
          unrepresentable.push(`${asset.symbol} on ${network.name}`);
          continue;
        }
        const paymentAddress = deps.rail.depositAddress({
          network,
          organizationId: tenant.organizationId,
          checkoutSessionId: id,
          merchantAddress: wallet.address,
        });
        const gas = org.paymentSetting.applyGasFee ? await deps.gasFees.quote(network, asset) : null;
        addresses.push({
          id: deterministicId(`session-address:${id}:${asset.id}`),
          checkoutSessionId: id,
          network: network.network,
          asset,
          paymentAddress,
          merchantAddress: wallet.address,
          gas: (gas?.gas ?? 0n).toString(),
          gasAmount: (gas?.amount ?? 0n).toString(),
        });
      }
    }
    // Only when no network could be paid: one that can, whose assets cannot hold the amount, refuses
    // the amount (a 400, as an invoice with that total is refused), whatever another's wallet is.
    if (addresses.length === 0 && unpayable.length > 0 && unpayable.length === networks.length)
      throw walletsInvalid(unpayable);
    if (addresses.length === 0) {
      const why = unrepresentable.length
        ? `the amount cannot be paid exactly in ${unrepresentable.join(', ')}`
        : `no network with a payment method of this organization accepts ${currency.toUpperCase()}${allowedChainIds ? ' among paymentSetting.allowedChains' : ''}${onlyAssets ? ` in the assets ${onlyAssets.join(', ')}` : ''}`;
      throw new ValidationError('lineItems', `cannot be paid: ${why}`, 'payment_method_not_available');
    }

    // Every record written here is new: its stream is not read first (`assumeNew`). The prices and
    // products, the customer and the session are asked for in this one turn, without awaiting each
    // other, so one group commit (one fsync) writes them all, in this order in the log.
    const ctx = {
      organizationId: tenant.organizationId,
      environment: tenant.environment,
      actor: tenant.actor,
      // The request's address goes on every record written for it (the audit trail shows it).
      ...(tenant.clientAddress ? { clientAddress: tenant.clientAddress } : {}),
      assumeNew: true,
    };
    const writes: Promise<unknown>[] = [deps.lineItems.write(items, ctx)];
    const lineItems = deps.lineItems.lineItemsOf(items, taxes ?? undefined);
    let sessionCustomerId = customerId;
    if (!customerId && customerData?.email && customerCreation === 'always' && mode === 'payment') {
      sessionCustomerId = deterministicId(`customer:session:${id}`);
      writes.push(
        deps.commands.handle(
          customerAggregate,
          sessionCustomerId,
          customerFromDetails(sessionCustomerId, tenant, { ...customerData, email: customerData.email }),
          ctx,
        ),
      );
    }
    const subtotal = amountSubtotal.toString();
    const total = amountDue.toString();
    const session: CheckoutSession = {
      id,
      organizationId: tenant.organizationId,
      environment: tenant.environment,
      createdAt: now,
      updatedAt: now,
      mode,
      status: 'open',
      paymentStatus: 'unpaid',
      expiresAt: new Date(expiresAtMs).toISOString(),
      currency,
      amountSubtotal: subtotal,
      amountTotal: total,
      amountFee: '0',
      amountNet: total,
      amountGasFee: '0',
      amountReceived: '0',
      amountOverpaid: '0',
      amountDetails: {
        currency,
        amountTotal: total,
        amountSubtotal: subtotal,
        amountDiscount: '0',
        amountTax: amountTax.toString(),
        amountFee: '0',
        amountGasFee: '0',
        feePercentage: 0,
        applyFee: false,
        applyGasFee: false,
        discountAmounts: [],
      },
      paymentMethodTypes: ['wallet'],
      paymentSetting: {
        paymentMethodTypes: ['wallet'],
        allowedChains: [...new Set(addresses.map((a) => a.asset.chainId))].map((chainId) => ({ chainId })),
        preferredChainId,
        allowSwap,
        allowFiatPayment,
      },
      submitType: request.submitType,
      successUrl: request.successUrl,
      cancelUrl: request.cancelUrl ?? null,
      clientReferenceId: request.clientReferenceId ?? null,
      customerId: sessionCustomerId,
      customerCreation,
      metadata: request.metadata,
      afterCompletion: request.afterCompletion,
      afterCompletionConfirmMsg: request.afterCompletionConfirmMsg ?? null,
      allowPromotionCodes: request.allowPromotionCodes,
      paymentLinkId: extra.paymentLinkId ?? null,
      invoiceId: extra.invoiceId ?? null,
      subscriptionId: extra.subscriptionId ?? (mode === 'subscription' ? subscriptionIdOfSession(id) : null),
      ...(request.customerUpdate ? { customerUpdate: request.customerUpdate } : {}),
      ...(customerData ? { customerDetails: customerData } : {}),
      ...extra.collected,
      url: checkoutPageUrl(deps.publicUrl, id),
      lineItems: { object: 'list', data: lineItems },
      addresses,
      paymentIntent: {
        id: deterministicId(`payment-intent:${id}`),
        organizationId: tenant.organizationId,
        createdAt: now,
        updatedAt: now,
        amount: total,
        amountReceived: '0',
        currency,
        status: 'requires_payment_method',
        paymentMethodTypes: ['wallet'],
        paymentMethod: null,
      },
      payments: [],
      sweeps: [],
      discounts: [],
      isManualPayment: false,
      completedAt: null,
      canceledAt: null,
      expiredAt: null,
      transactionHash: null,
    };
    const created = deps.commands.handle(checkoutSessionAggregate, id, { type: 'CreateCheckoutSession', session }, ctx);
    // Answered only once every write is durable; a failed one fails the request (and a retry with
    // its Idempotency-Key writes the same ids again, finding what was written).
    const [result] = await Promise.all([created, ...writes]);
    return { session, position: result.position };
  };
}
