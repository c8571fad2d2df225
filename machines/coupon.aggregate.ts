import type { SnapshotFrom } from 'xstate';
import { machineFold, type Aggregate } from '../src/actors/aggregate.ts';
import { decideCoupon, type CouponCommand } from './coupon.decide.ts';
import { couponMachine } from './coupon.machine.ts';
import type { CouponEvent } from './coupon.types.ts';

export type CouponSnapshot = SnapshotFrom<typeof couponMachine>;

/**
 * A coupon and its promotion codes share one stream, so every redemption is an append at the
 * coupon's expected revision: two redemptions racing for the last slot cannot both be recorded;
 * the loser is reloaded, re-decided and refused.
 */
export const couponAggregate: Aggregate<CouponSnapshot, CouponEvent, CouponCommand> = {
  category: 'coupon',
  ...machineFold(couponMachine),
  decide: decideCoupon,
};
