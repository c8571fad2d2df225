import Router from '@koa/router';
import QRCode from 'qrcode';
import { checkoutSessionAggregate } from '../../../machines/checkout-session.aggregate.ts';
import type { CheckoutSessionCommand } from '../../../machines/checkout-session.decide.ts';
import type { CheckoutSession, SessionAddress } from '../../../machines/checkout-session.types.ts';
import { organizationRecordId } from '../../actors/organization.ts';
import { couponAggregate } from '../../../machines/coupon.aggregate.ts';
import { discountFor } from '../../../machines/coupon.evolve.ts';
import { findPromotionCode } from '../../projections/coupons.projection.ts';
import { renderCheckoutPage, successRedirect } from '../../hosted/checkout-page.ts';
import { COLLECTIONS, type CheckoutSessionDoc, type OrganizationDoc } from '../../projections/collections.ts';
import { NotFoundError, ValidationError } from '../../shared/errors.ts';
import { isUuid } from '../../shared/ids.ts';
import { asObject, requiredString } from '../../shared/input.ts';
import { formatAmount } from '../../shared/money.ts';
import type { ApiContext, ApiDeps, ApiState } from '../api-context.ts';

/** A payment URI wallets understand (EIP-681 on EVM chains). */
export function paymentUri(address: SessionAddress, amountDue: string): string {
  const { asset } = address;
  if (asset.address === 'native') return `ethereum:${address.paymentAddress}@${asset.chainId}?value=${amountDue}`;
  return `ethereum:${asset.address}@${asset.chainId}/transfer?address=${address.paymentAddress}&uint256=${amountDue}`;
}

/**
 * Public routes of the hosted checkout page. They need no key: a session id is an unguessable
 * uuid, and each route acts on that one session only.
 */
export function hostedCheckoutRoutes(deps: ApiDeps): Router<ApiState> {
  const router = new Router<ApiState>({ prefix: '/checkout' });
  const sessions = deps.readStore.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions);
  const orgs = deps.readStore.collection<OrganizationDoc>(COLLECTIONS.organizations);

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
    const session = await load(ctx);
    const org = await orgs.get(organizationRecordId(session.organizationId, session.environment));
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Cache-Control', 'no-store');
    ctx.set(
      'Content-Security-Policy',
      "default-src 'self'; img-src * data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'; connect-src 'self'",
    );
    ctx.body = renderCheckoutPage(session, org);
  });

  router.get('/:id/status', async (ctx) => {
    const session = await load(ctx);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = {
      id: session.id,
      status: session.status,
      paymentStatus: session.paymentStatus,
      currency: session.currency.toUpperCase(),
      amountTotal: session.amountTotal,
      amountReceived: session.amountReceived,
      amountReceivedFormatted: formatAmount(BigInt(session.amountReceived)),
      redirectUrl:
        session.status === 'complete' && session.afterCompletion === 'redirect' ? successRedirect(session) : null,
      message: session.status === 'complete' ? session.afterCompletionConfirmMsg : null,
    };
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
      chainId: address.asset.chainId,
      symbol: address.asset.symbol,
      asset: address.asset,
      amountDueRaw: method.amountDue,
      amountDue: formatAmount(BigInt(method.amountDue), address.asset.decimals),
      paymentUri: uri,
      qrSvg: await QRCode.toString(uri, { type: 'svg', margin: 1 }),
    };
  });

  /** The payer applies a promotion code: the redemption is counted on the coupon, then the discount on the session. */
  router.post('/:id/promotion-code', async (ctx) => {
    const session = await load(ctx);
    const code = requiredString(asObject(ctx.state.body, ''), 'code', '', { max: 100 });
    if (!session.allowPromotionCodes)
      throw new ValidationError(
        'code',
        'this checkout session does not accept promotion codes',
        'promotion_codes_not_allowed',
      );
    const tenant = { organizationId: session.organizationId, environment: session.environment };
    const promotion = await findPromotionCode(deps.readStore, tenant, code);
    if (!promotion)
      throw new ValidationError('code', `${code} is not a valid promotion code`, 'promotion_code_invalid');
    const ctxFor = { ...tenant, actor: 'payer', causationId: session.id };
    // The session id is the redemption id: a retried or repeated application counts once.
    const redeemed = await deps.commands.handle(
      couponAggregate,
      promotion.couponId,
      { type: 'RedeemPromotionCode', redemptionId: session.id, promotionCode: promotion.id },
      ctxFor,
    );
    const coupon = redeemed.state.context.coupon!;
    if (coupon.currency !== null && coupon.currency !== session.currency) {
      throw new ValidationError(
        'code',
        `${code} takes ${coupon.currency.toUpperCase()} off; this checkout is in ${session.currency.toUpperCase()}`,
      );
    }
    const amountDiscount = discountFor(coupon, BigInt(session.amountSubtotal)).toString();
    let updated = await run(session, {
      type: 'ApplyDiscount',
      discount: { couponId: coupon.id, promotionCodeId: promotion.id, code: promotion.code, amountDiscount },
    });
    const chosen = updated.paymentIntent.paymentMethod;
    // A code that leaves nothing to pay completed the session: no amount is due on any asset.
    if (chosen && updated.status === 'open')
      updated = await run(updated, { type: 'SelectPaymentMethod', addressId: chosen.id });
    ctx.body = {
      status: updated.status,
      code: promotion.code,
      amountDiscount,
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
