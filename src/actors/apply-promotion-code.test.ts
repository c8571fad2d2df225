import test from 'ava';
import { checkoutSessionAggregate } from '../../machines/checkout-session.aggregate.ts';
import { sessionFixture } from '../../machines/checkout-session.fixture.ts';
import { InvalidStateError, ValidationError } from '../shared/errors.ts';
import { createPromotionCodeApplier } from './apply-promotion-code.ts';
import type { CommandHandler } from './command-handler.ts';
import { MERCHANT, promotionCodeWorld, TENANT } from './promotion-code.fixture.ts';

/** The command handler with `between` run once, right after the first redemption is appended: another request's turn. */
function interleaved(commands: CommandHandler, between: () => Promise<unknown>): CommandHandler {
  let ran = false;
  return {
    load: commands.load,
    async handle(aggregate, id, command, ctx) {
      const result = await commands.handle(aggregate, id, command, ctx);
      if (!ran && (command as { type: string }).type === 'RedeemPromotionCode') {
        ran = true;
        await between();
      }
      return result;
    },
  };
}

const redemptionEvents = async (world: Awaited<ReturnType<typeof promotionCodeWorld>>, couponId: string) =>
  (await world.couponEvents(couponId))
    .filter((e) => e.type.startsWith('PromotionCode') || e.type.startsWith('CouponLimit'))
    .map((e) => e.type);

test('a redemption whose discount loses the race to another code applied meanwhile is given back before the refusal answers: the coupon count stays exact', async (t) => {
  const world = await promotionCodeWorld(t);
  const once = await world.coupon('ONCE', { maxRedemptions: 1 });
  await world.coupon('OTHER', { percentOff: 5 });
  const session = await world.session();
  const other = createPromotionCodeApplier(world);
  // Both requests pass their checks; ONCE is redeemed first, then OTHER is applied before ONCE's discount.
  const commands = interleaved(world.commands, () => other({ ...session, ...TENANT }, 'OTHER'));
  const apply = createPromotionCodeApplier({ ...world, commands });

  const error = await t.throwsAsync(apply({ ...session, ...TENANT }, 'ONCE'), { instanceOf: ValidationError });
  t.is(error.code, 'parameters_exclusive');
  t.deepEqual(await redemptionEvents(world, once.id), [
    'PromotionCodeRedeemed',
    'CouponLimitReached',
    'PromotionCodeRedemptionReleased',
  ]);
  t.like(await world.couponState(once.id), { timesRedeemed: 0, status: 'active' });
  const released = (await world.couponEvents(once.id)).at(-1)!;
  t.like(released.data, {
    redemptionId: session.id,
    reason: 'promotion code OTHER was applied to the checkout session instead',
  });
  const discounts = (await world.commands.load(checkoutSessionAggregate, session.id, TENANT)).state.context.session!
    .discounts;
  t.deepEqual(
    discounts.map((d) => d.code),
    ['OTHER'],
  );
});

test('a redemption whose session expired between the checks and the discount is given back before the refusal answers', async (t) => {
  const world = await promotionCodeWorld(t);
  const once = await world.coupon('ONCE', { maxRedemptions: 1 });
  const session = await world.session();
  const commands = interleaved(world.commands, async () => {
    world.clock.set(Date.parse(session.expiresAt));
    await world.commands.handle(checkoutSessionAggregate, session.id, { type: 'ExpireCheckoutSession' }, MERCHANT);
  });
  const apply = createPromotionCodeApplier({ ...world, commands });

  await t.throwsAsync(apply({ ...session, ...TENANT }, 'once'), { instanceOf: InvalidStateError, message: /expired/ });
  t.like(await world.couponState(once.id), { timesRedeemed: 0, status: 'active' });
  t.like((await world.couponEvents(once.id)).at(-1), {
    type: 'PromotionCodeRedemptionReleased',
    data: { redemptionId: session.id, reason: 'the checkout session expired unpaid' },
  });
});

test('the same code applied twice at once counts once and applies once', async (t) => {
  const world = await promotionCodeWorld(t);
  const once = await world.coupon('ONCE', { maxRedemptions: 2 });
  const session = await world.session();
  const apply = createPromotionCodeApplier(world);
  const both = await Promise.all([apply({ ...session, ...TENANT }, 'ONCE'), apply({ ...session, ...TENANT }, 'once')]);
  t.deepEqual(
    both.map((a) => a.amountDiscount),
    ['30000000', '30000000'],
  );
  t.deepEqual(await redemptionEvents(world, once.id), ['PromotionCodeRedeemed']);
  t.is(
    (await world.commands.load(checkoutSessionAggregate, session.id, TENANT)).state.context.session!.discounts.length,
    1,
  );
});

test('a percent-off code on an amount a 6-decimal asset takes is rounded so the asset still takes the total: USDC can then be chosen', async (t) => {
  const world = await promotionCodeWorld(t);
  await world.coupon('FIFTEEN', { percentOff: 15 });
  const amount = '123456700'; // 1.234567 USDC
  const base = sessionFixture();
  const session = await world.session({
    amountSubtotal: amount,
    amountTotal: amount,
    amountNet: amount,
    amountDetails: { ...base.amountDetails, amountSubtotal: amount, amountTotal: amount },
    paymentIntent: { ...base.paymentIntent, amount },
  });
  const applied = await createPromotionCodeApplier(world)({ ...session, ...TENANT }, 'FIFTEEN');
  // 15% is 0.18518505 USDC: 0.185185, so the total is 1.049382, not 1.04938195.
  t.is(applied.amountDiscount, '18518500');
  await world.commands.handle(
    checkoutSessionAggregate,
    session.id,
    { type: 'SelectPaymentMethod', addressId: 'addr-usdc' },
    MERCHANT,
  );
  const after = (await world.commands.load(checkoutSessionAggregate, session.id, TENANT)).state.context.session!;
  t.is(after.amountTotal, '104938200');
  t.is(after.paymentIntent.paymentMethod?.id, 'addr-usdc');
});
