import { checkoutSessionAggregate } from '../../machines/checkout-session.aggregate.ts';
import { couponAggregate } from '../../machines/coupon.aggregate.ts';
import type { Environment } from '../event-store/event-store.ts';
import type { CommandContext, CommandHandler } from './command-handler.ts';
import { redemptionFate, type SessionRedemption } from './promotion-code-redemption-fate.ts';

const ACTOR = 'system:promotion-code-releases';

/** Gives back the redemption of `checkoutSessionId` on `couponId`: its log position, or null for a repeat. */
async function release(
  commands: CommandHandler,
  tenant: { organizationId: string; environment: string },
  couponId: string,
  checkoutSessionId: string,
  reason: string,
): Promise<bigint | null> {
  const command = { type: 'ReleasePromotionCodeRedemption', redemptionId: checkoutSessionId, reason } as const;
  const ctx: CommandContext = {
    organizationId: tenant.organizationId,
    environment: tenant.environment as Environment,
    actor: ACTOR,
    causationId: checkoutSessionId,
  };
  return (await commands.handle(couponAggregate, couponId, command, ctx)).position;
}

/**
 * Give the session's redemption back now if its session (as recorded in the log) can never use it;
 * otherwise nothing. Answers the log position of the release, or null.
 */
export async function releaseIfUnusable(
  commands: CommandHandler,
  tenant: { organizationId: string; environment: Environment },
  checkoutSessionId: string,
  redemption: SessionRedemption,
): Promise<bigint | null> {
  const session = (await commands.load(checkoutSessionAggregate, checkoutSessionId, tenant)).state.context.session;
  if (!session) return null;
  const fate = redemptionFate(session, redemption);
  if (fate.kind !== 'release') return null;
  return release(commands, tenant, redemption.couponId, checkoutSessionId, fate.reason);
}
