import { checkoutSessionAggregate } from '../../machines/checkout-session.aggregate.ts';
import type { CheckoutSessionCommand } from '../../machines/checkout-session.decide.ts';
import type { CheckoutSessionEvent } from '../../machines/checkout-session.types.ts';
import { couponAggregate } from '../../machines/coupon.aggregate.ts';
import type { CouponCommand } from '../../machines/coupon.decide.ts';
import { discountFor } from '../../machines/coupon.evolve.ts';
import type { Environment } from '../event-store/event-store.ts';
import { findPromotionCode } from '../projections/coupons.projection.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import type { Clock } from '../shared/clock.ts';
import { NotFoundError, ValidationError } from '../shared/errors.ts';
import { taxDecimals, taxesAfterDiscount } from '../shared/tax.ts';
import type { Rail } from '../chain-ingest/rail.ts';
import type { CommandHandler } from './command-handler.ts';
import { releaseIfUnusable } from './promotion-code-releases.ts';

/** The checkout session a payer applies a code to, in its tenant. */
type Target = { id: string; organizationId: string; environment: Environment };

export type AppliedPromotionCode = {
  /** The code as the merchant wrote it. */
  code: string;
  amountDiscount: string;
  /** Log position of the last event appended, or null when the code was already applied. */
  position: bigint | null;
};

/**
 * The payer applies a promotion code to a checkout session, a workflow over two records:
 * 1. check: every step is decided on the session and coupon as recorded (the session accepts
 *    codes, is open and unpaid and has no other code; the code exists and is usable; its currency
 *    is the session's; the revealed amount can be priced again), so a refusal writes nothing;
 * 2. redeem the code on the coupon (the coupon's stream decides its limits, so racing payers
 *    cannot overspend it; the session id is the redemption id, so a repeat counts once);
 * 3. apply the discount to the session, and price the payment method already revealed again.
 * A redemption whose discount then cannot be applied (the session expired or took another code in
 * between) is given back at once when the session can never use it; if that fails too, or the
 * process stops in between, the promotion code releases (driven from the log) give it back.
 */
export function createPromotionCodeApplier(deps: {
  commands: CommandHandler;
  readStore: ReadStore;
  clock: Clock;
  rail: Pick<Rail, 'networks'>;
}) {
  const { commands } = deps;

  /** 1. Every step decided on the records as loaded, by the deciders the writes run: the first refusal answers. */
  async function check(target: Target, text: string) {
    const tenant = { organizationId: target.organizationId, environment: target.environment };
    const loaded = await commands.load(checkoutSessionAggregate, target.id, tenant);
    const session = loaded.state.context.session;
    if (!session) throw new NotFoundError('checkout session', target.id);
    if (!session.allowPromotionCodes)
      throw new ValidationError(
        'code',
        'this checkout session does not accept promotion codes',
        'promotion_codes_not_allowed',
      );
    const promotion = await findPromotionCode(deps.readStore, tenant, text);
    const coupon = promotion
      ? (await commands.load(couponAggregate, promotion.couponId, tenant)).state
      : couponAggregate.initialState();
    const terms = coupon.context.coupon;
    if (!promotion || !terms)
      throw new ValidationError('code', `${text} is not a valid promotion code`, 'promotion_code_invalid');

    const now = { now: new Date(deps.clock.now()).toISOString() };
    // Rounded as tax is, to the currency's coarsest asset: a discount no asset can take leaves an unpayable total.
    const decimals = taxDecimals(deps.rail.networks(target.environment), session.currency);
    const discount = discountFor(terms, BigInt(session.amountSubtotal), decimals);
    const amountDiscount = discount.toString();
    // Taken off before tax: each line is taxed again on what is left of it.
    const lineTaxes = taxesAfterDiscount(session.lineItems.data, discount, decimals);
    const apply: CheckoutSessionCommand = {
      type: 'ApplyDiscount',
      ...(lineTaxes ? { lineTaxes } : {}),
      discount: {
        couponId: terms.id,
        promotionCodeId: promotion.id,
        code: promotion.code,
        amountDiscount,
        coupon: {
          name: terms.name,
          percentOff: terms.percentOff,
          amountOff: terms.amountOff,
          currency: terms.currency,
        },
      },
    };
    const applied = checkoutSessionAggregate.decide(loaded.state, apply, now);
    const redeem: CouponCommand = {
      type: 'RedeemPromotionCode',
      redemptionId: session.id,
      promotionCode: promotion.id,
    };
    couponAggregate.decide(coupon, redeem, now);
    if (terms.currency !== null && terms.currency !== session.currency) {
      throw new ValidationError(
        'code',
        `${promotion.code} takes ${terms.currency.toUpperCase()} off; this checkout is in ${session.currency.toUpperCase()}`,
        'promotion_code_currency_mismatch',
      );
    }
    // The payment method already revealed is priced again after the discount: it must still be payable.
    const discounted = applied.reduce<typeof loaded.state>(
      (state, event: CheckoutSessionEvent) => checkoutSessionAggregate.evolve(state, event),
      loaded.state,
    );
    // A code that leaves nothing to pay completes the session: then no amount is due on any asset.
    const after = discounted.context.session;
    const chosen = after?.status === 'open' ? after.paymentIntent.paymentMethod : null;
    const reprice: CheckoutSessionCommand | null = chosen
      ? { type: 'SelectPaymentMethod', addressId: chosen.id }
      : null;
    if (reprice) checkoutSessionAggregate.decide(discounted, reprice, now);
    return {
      tenant,
      sessionId: session.id,
      redemption: { couponId: terms.id, promotionCodeId: promotion.id },
      code: promotion.code,
      amountDiscount,
      redeem,
      apply,
      reprice,
    };
  }

  return async function applyPromotionCode(target: Target, text: string): Promise<AppliedPromotionCode> {
    const plan = await check(target, text);
    const { tenant, sessionId, redemption } = plan;
    const ctx = { ...tenant, actor: 'payer', causationId: sessionId };
    // 2. Redeem: the coupon's stream refuses it if a racing payer took the last one meanwhile.
    let position = (await commands.handle(couponAggregate, redemption.couponId, plan.redeem, ctx)).position;
    // 3. Apply: a redemption the session can now never use is given back before the refusal answers.
    try {
      position = (await commands.handle(checkoutSessionAggregate, sessionId, plan.apply, ctx)).position ?? position;
    } catch (error) {
      // Best effort here: if this fails too, the promotion code releases give it back from the log.
      await releaseIfUnusable(commands, tenant, sessionId, redemption).catch(() => null);
      throw error;
    }
    if (plan.reprice)
      position = (await commands.handle(checkoutSessionAggregate, sessionId, plan.reprice, ctx)).position ?? position;
    return { code: plan.code, amountDiscount: plan.amountDiscount, position };
  };
}
