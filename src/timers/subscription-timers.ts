import { checkoutSessionAggregate, type CheckoutSessionSnapshot } from '../../machines/checkout-session.aggregate.ts';
import type { CheckoutSessionStatus } from '../../machines/checkout-session.types.ts';
import { subscriptionAggregate } from '../../machines/subscription.aggregate.ts';
import { billLapsesAt, type SubscriptionCommand } from '../../machines/subscription.decide.ts';
import type { SubscriptionBill } from '../../machines/subscription.types.ts';
import type { CommandContext, CommandHandler } from '../actors/command-handler.ts';
import { SUBSCRIPTION_TIMERS } from '../projections/subscriptions.projection.ts';
import { COLLECTIONS, type CheckoutSessionDoc, type TimerDoc } from '../projections/collections.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import type { ChainReadGate } from './chain-read-gate.ts';
import type { TimerHandler } from './timer-runner.ts';

const COMMANDS: Record<string, (timer: TimerDoc) => SubscriptionCommand> = {
  [SUBSCRIPTION_TIMERS.renew]: (timer) => ({ type: 'RenewSubscription', invoiceId: String(timer.args?.invoiceId) }),
  [SUBSCRIPTION_TIMERS.pastDue]: () => ({ type: 'MarkRenewalPaymentMissed' }),
  [SUBSCRIPTION_TIMERS.unpaid]: () => ({ type: 'MarkSubscriptionUnpaid' }),
};

/** Pay-page sessions of a first invoice that can hold its payment: open (maybe processing), part-paid, or complete. */
const PAY_PAGE: CheckoutSessionStatus[] = ['open', 'incomplete', 'complete'];

/**
 * Whether a checkout session of the first bill still holds its payment, so the subscription must
 * not expire yet: a payment detected in time waits for its confirmations (`open.processing`,
 * intent `processing`), or the session is complete and the subscription is about to record it.
 * A part-paid session (`incomplete`) does not hold the expiry.
 */
const holdsPayment = (session: CheckoutSessionSnapshot): boolean =>
  session.matches({ open: 'processing' }) || session.matches('complete');

type Waited = Awaited<ReturnType<TimerHandler>>;

/**
 * The subscription's clock: the first payment's expiry, the period end (renewal or scheduled
 * cancellation), the renewal invoice's due time (past due) and seven days later (unpaid). The
 * decider checks the time itself, so a timer that fires early or twice changes nothing.
 *
 * The first payment's expiry follows its bill, as a checkout session's own expiry does: it waits
 * (`notYet`, tried again when the matcher handles a chain message, or a minute later) while the
 * chain followers of the bill's networks have not read up to its due time (see
 * `createChainReadGate`) and while a payment to the bill is pending on chain or paid but not yet
 * recorded on the subscription. What it waits on is read from the logs of the bill's sessions:
 * - a first checkout session is expired first, with its own `ExpireCheckoutSession`: its decider
 *   expires it only while no payment is pending, in one append, so a payment detected after that
 *   is a late payment of an expired session. While the session stays open (a payment pending)
 *   or completed, the subscription waits: confirmed, the payment starts it; withdrawn by a reorg,
 *   one paid in time is still waited for until its height is final in another block (it may be
 *   mined again), then the session expires and the next try expires the subscription;
 * - a first invoice waits while one of its pay-page sessions is open with a payment pending, or
 *   complete (the invoice is about to be paid).
 * A bill only part-paid (its session `incomplete`) does not hold the expiry: the subscription
 * becomes `incomplete_expired` and the money stays on the session.
 */
export function subscriptionTimerHandlers(
  commands: CommandHandler,
  deps: { readStore: ReadStore; gate?: ChainReadGate },
): Record<string, TimerHandler> {
  const sessions = deps.readStore.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions);

  /** The first bill, from the subscription's log, while it can still expire it (incomplete, bill open). */
  async function expiringBill(timer: TimerDoc, ctx: CommandContext): Promise<SubscriptionBill | null> {
    const { state } = await commands.load(subscriptionAggregate, timer.recordId, ctx);
    const bill = state.context.subscription?.latestInvoice ?? null;
    return state.value === 'incomplete' && bill?.status === 'open' ? bill : null;
  }

  /** The read-model documents of the bill's sessions: the first checkout session, or the first invoice's pay pages. */
  async function sessionsOf(bill: SubscriptionBill, ctx: CommandContext): Promise<CheckoutSessionDoc[]> {
    if (bill.kind === 'checkout_session')
      return [await sessions.get(bill.id)].filter((doc): doc is CheckoutSessionDoc => doc !== null);
    return sessions.find({
      organizationId: ctx.organizationId,
      environment: ctx.environment,
      invoiceId: bill.id,
      status: { $in: PAY_PAGE },
    });
  }

  /** Whether the expiry waits for the bill's payment; `position` of the first session's expiry when this recorded it. */
  async function waitsForPayment(
    bill: SubscriptionBill,
    docs: CheckoutSessionDoc[],
    ctx: CommandContext,
  ): Promise<{ waits: boolean; position: bigint | null }> {
    if (bill.kind === 'checkout_session') {
      const { state, position } = await commands.handle(
        checkoutSessionAggregate,
        bill.id,
        { type: 'ExpireCheckoutSession' },
        ctx,
      );
      return { waits: state.matches('open') || state.matches('complete'), position };
    }
    for (const doc of docs) {
      if (doc.status === 'incomplete') continue;
      if (holdsPayment((await commands.load(checkoutSessionAggregate, doc.id, ctx)).state))
        return { waits: true, position: null };
    }
    return { waits: false, position: null };
  }

  async function expireFirstPayment(timer: TimerDoc, ctx: CommandContext): Promise<Waited> {
    const bill = await expiringBill(timer, ctx);
    let sessionExpiry: bigint | null = null;
    if (bill) {
      const docs = await sessionsOf(bill, ctx);
      const networks = docs
        .filter((doc) => doc.status !== 'complete')
        .flatMap((doc) => doc.addresses.map((address) => address.network));
      if (deps.gate && (await deps.gate.holds(networks, Date.parse(billLapsesAt(bill))))) return { notYet: true };
      const { waits, position } = await waitsForPayment(bill, docs, ctx);
      if (waits) return { notYet: true };
      sessionExpiry = position;
    }
    const expired = await commands.handle(subscriptionAggregate, timer.recordId, { type: 'ExpireFirstPayment' }, ctx);
    return { position: expired.position ?? sessionExpiry };
  }

  return {
    [SUBSCRIPTION_TIMERS.expireFirst]: expireFirstPayment,
    ...Object.fromEntries(
      Object.entries(COMMANDS).map(([kind, commandOf]): [string, TimerHandler] => [
        kind,
        (timer, ctx) => commands.handle(subscriptionAggregate, timer.recordId, commandOf(timer), ctx),
      ]),
    ),
  };
}
