import Router from '@koa/router';
import QRCode from 'qrcode';
import { checkoutSessionAggregate } from '../../../machines/checkout-session.aggregate.ts';
import type { CheckoutSessionCommand } from '../../../machines/checkout-session.decide.ts';
import type { CheckoutSession } from '../../../machines/checkout-session.types.ts';
import { organizationRecordId } from '../../actors/organization.ts';
import { createPromotionCodeApplier } from '../../actors/apply-promotion-code.ts';
import { renderCheckoutPage, type ProductView } from '../../hosted/checkout-page.ts';
import { paymentUri, payerStatus } from '../../hosted/checkout-status.ts';
import { renderErrorPage } from '../../hosted/error-page.ts';
import { walletDue } from '../../hosted/wallet-actions.ts';
import type { DevnetInfo } from '../../chain-ingest/evm/devnet/devnet-info.ts';
import { PRODUCTS, type ProductDoc } from '../../projections/catalog.projection.ts';
import { COLLECTIONS, type CheckoutSessionDoc, type OrganizationDoc } from '../../projections/collections.ts';
import { NotFoundError, ValidationError } from '../../shared/errors.ts';
import { isUuid } from '../../shared/ids.ts';
import { asObject, requiredString } from '../../shared/input.ts';
import { formatAmount } from '../../shared/money.ts';
import type { ApiContext, ApiDeps, ApiState } from '../api-context.ts';

export { paymentUri } from '../../hosted/checkout-status.ts';

const QR = { type: 'svg', margin: 1 } as const;

/**
 * Public routes of the hosted checkout page. They need no key: a session id is an unguessable
 * uuid, and each route acts on that one session only.
 */
export function hostedCheckoutRoutes(deps: ApiDeps & { devnet?: DevnetInfo | null }): Router<ApiState> {
  const router = new Router<ApiState>({ prefix: '/checkout' });
  const sessions = deps.readStore.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions);
  const orgs = deps.readStore.collection<OrganizationDoc>(COLLECTIONS.organizations);
  const products = deps.readStore.collection<ProductDoc>(PRODUCTS);
  const applyPromotionCode = createPromotionCodeApplier(deps);
  /** A network's name as the registry gives it ("Local Devnet"), the bus name when no rail offers it now. */
  const names = (network: string) =>
    [...deps.rail.networks('test'), ...deps.rail.networks('live')].find((n) => n.network === network)?.name ?? network;
  const statusOf = (session: CheckoutSession) => payerStatus(session, names, deps.clock.now(), deps.chainProgress);

  const load = async (ctx: ApiContext): Promise<CheckoutSessionDoc> => {
    const id = ctx.params.id!;
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

  router.get('/:id', async (ctx) => {
    const id = ctx.params.id!;
    const session = isUuid(id) ? await sessions.get(id) : null;
    ctx.set('Cache-Control', 'no-store');
    ctx.type = 'text/html; charset=utf-8';
    if (!session) {
      // A browser opened it: an HTML page, not the API's JSON error.
      ctx.status = 404;
      ctx.body = renderErrorPage({
        heading: 'Checkout not found',
        message:
          'This checkout does not exist or is no longer available. Check the link, or go back to the shop and start again.',
      });
      return;
    }
    const org = await orgs.get(organizationRecordId(session.organizationId, session.environment));
    const views = new Map<string, ProductView>();
    for (const item of session.lineItems.data) {
      const product = await products.get(item.price.productId);
      if (product) views.set(product.id, { description: product.description, images: product.images });
    }
    ctx.body = renderCheckoutPage({
      session,
      org,
      status: statusOf(session),
      names,
      products: views,
      wallet: { networks: deps.rail.networks(session.environment), devnet: deps.devnet ?? null },
    });
  });

  /** The session as the page shows it (see payerStatus): polled by the page every second or so. */
  router.get('/:id/status', async (ctx) => {
    const session = await load(ctx);
    ctx.set('Cache-Control', 'no-store');
    const status = statusOf(session);
    // The QR of what to send now, so the page's request follows payments as they are seen.
    const wallet = walletDue(session);
    ctx.body = status.payment
      ? {
          ...status,
          payment: { ...status.payment, qrSvg: await QRCode.toString(status.payment.paymentUri, QR) },
          wallet,
        }
      : { ...status, wallet };
  });

  /** The "QR reveal": the payer picks an asset; the payment intent records it with the amount due. */
  router.post('/:id/payment-method', async (ctx) => {
    const session = await load(ctx);
    const body = asObject(ctx.state.body, '');
    const assetId = requiredString(body, 'assetId', '', { max: 200 });
    const address = session.addresses.find((a) => a.id === assetId || a.asset.id === assetId);
    if (!address) throw new ValidationError('assetId', 'is not offered by this checkout session');
    const updated = await run(session, { type: 'SelectPaymentMethod', addressId: address.id });
    const method = updated.paymentIntent.paymentMethod!;
    const uri = paymentUri(address, method.amountDue);
    ctx.body = {
      address: address.paymentAddress,
      network: address.network,
      networkName: names(address.network),
      chainId: address.asset.chainId,
      symbol: address.asset.symbol,
      assetName: address.asset.name,
      asset: address.asset,
      amountDueRaw: method.amountDue,
      amountDue: formatAmount(BigInt(method.amountDue), address.asset.decimals),
      paymentUri: uri,
      qrSvg: await QRCode.toString(uri, QR),
      wallet: walletDue(updated),
    };
  });

  /** The payer applies a promotion code: checked in full, then counted on the coupon, then applied (see the applier). */
  router.post('/:id/promotion-code', async (ctx) => {
    const session = await load(ctx);
    const code = requiredString(asObject(ctx.state.body, ''), 'code', '', { max: 100 });
    const applied = await applyPromotionCode(session, code);
    if (applied.position !== null) await deps.projections.waitFor(applied.position);
    const updated = (await sessions.get(session.id))!;
    ctx.body = {
      status: updated.status,
      code: applied.code,
      amountDiscount: applied.amountDiscount,
      amountSubtotal: updated.amountSubtotal,
      amountTotal: updated.amountTotal,
      amountDetails: updated.amountDetails,
    };
  });

  router.post('/:id/cancel', async (ctx) => {
    const session = await load(ctx);
    const updated = await run(session, { type: 'CancelCheckoutSession', reason: 'canceled by the payer' });
    ctx.body = { status: updated.status, redirectUrl: updated.cancelUrl };
  });

  return router;
}
