import { couponAggregate } from '../../machines/coupon.aggregate.ts';
import type { CommandHandler } from '../actors/command-handler.ts';
import { COUPON_EXPIRY_TIMER, PROMOTION_CODE_EXPIRY_TIMER } from '../projections/coupon-expiry-timers.ts';
import type { TimerHandler } from './timer-runner.ts';

/** A coupon becomes `expired` at its `redeemBy`, a promotion code at its own `expiredAt`. */
export function couponTimerHandlers(commands: CommandHandler): Record<string, TimerHandler> {
  return {
    [COUPON_EXPIRY_TIMER]: (timer, ctx) =>
      commands.handle(couponAggregate, timer.recordId, { type: 'ExpireCoupon' }, ctx),
    [PROMOTION_CODE_EXPIRY_TIMER]: async (timer, ctx) => {
      const promotionCodeId = timer.args?.promotionCodeId;
      if (typeof promotionCodeId !== 'string') return { position: null };
      return commands.handle(couponAggregate, timer.recordId, { type: 'ExpirePromotionCode', promotionCodeId }, ctx);
    },
  };
}
