import { checkoutSessionAggregate, type CheckoutSessionSnapshot } from '../../machines/checkout-session.aggregate.ts';
import type { CheckoutSessionStatus } from '../../machines/checkout-session.types.ts';
import { subscriptionAggregate } from '../../machines/subscription.aggregate.ts';
import { billLapsesAt, type SubscriptionCommand } from '../../machines/subscription.decide.ts';
import type { SubscriptionBill, SubscriptionStatus } from '../../machines/subscription.types.ts';
import type { CommandContext, CommandHandler } from '../actors/command-handler.ts';
import { SUBSCRIPTION_TIMERS } from '../projections/subscriptions.projection.ts';
import { COLLECTIONS, type CheckoutSessionDoc, type TimerDoc } from '../projections/collections.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import type { ChainReadGate } from './chain-read-gate.ts';
import type { TimerHandler } from './timer-runner.ts';

const COMMANDS: Record<string, (timer: TimerDoc) => SubscriptionCommand> = {
  [SUBSCRIPTION_TIMERS.renew]: (timer) => ({ type: 'RenewSubscription', invoiceId: String(timer.args?.invoiceId) }),
  [SUBSCRIPTION_TIMERS.unpaid]: () => ({ type: 'MarkSubscriptionUnpaid' }),
};

/** Pay-page sessions of an invoice that can hold its payment: open (maybe processing), part-paid, or complete. */
const PAY_PAGE: CheckoutSessionStatus[] = ['open', 'incomplete', 'complete'];

/**
 * Whether a checkout session of a bill still holds its payment, so the bill must not lapse yet: a
 * payment detected in time waits for its confirmations (`open.processing`, intent `processing`),
 * or the session is complete and the subscription is about to record it.
 */
const holdsPayment = (session: CheckoutSessionSnapshot): boolean =>
  session.matches({ open: 'processing' }) || session.matches('complete');

/**
 * A part-paid first session (`incomplete`) holds the first payment only while more money to it is
 * pending on chain (the rest sent in time, or withdrawn by a reorg and free to come back).
 */
const holdsFirstPayment = (session: CheckoutSessionSnapshot): boolean =>
  holdsPayment(session) ||
  (session.matches('incomplete') &&
    (session.context.session?.payments.some((p) => p.status === 'pending' || p.mayReturn === true) ?? false));

type Waited = Awaited<ReturnType<TimerHandler>>;

/**
 * The subscription's clock: the first payment's expiry, the period end (renewal or scheduled
 * cancellation), the renewal invoice's due time (past due) and seven days later (unpaid). The
 * decider checks the time itself, so a timer that fires early or twice changes nothing.
 *
 * The first payment's expiry and a renewal's due time follow their bill, as a checkout session's
 * own expiry does: they wait (`notYet`, tried again when the matcher handles a chain message, or a
 * minute later) while the chain followers of the bill's networks have not read up to its due time
 * (see `createChainReadGate`) and while a payment to the bill is pending on chain or paid but not
 * yet recorded on the subscription (a renewal paid in time is not past due). What they wait on is
 * read from the logs of the bill's sessions:
 * - a first checkout session is expired first, with its own `ExpireCheckoutSession`: its decider
 *   expires it only while no payment is pending, in one append, so a payment detected after that
 *   is a late payment of an expired session. While the session stays open (a payment pending),
 *   part-paid or completed, the subscription waits: confirmed, the payment starts it; withdrawn by
 *   a reorg, one paid in time is still waited for until its height is final in another block (it
 *   may be mined again), then the session expires and the next try expires the subscription;
 * - an invoice waits while one of its pay-page sessions is open with a payment pending, or
 *   complete (the invoice is about to be paid); a first invoice also while one is part-paid.
 * A first bill part-paid with nothing more pending at its due time no longer holds the subscription:
 * a part-paid session never expires itself, so waiting for its rest retried the expiry every minute
 * for good. The subscription expires (Stripe ends an incomplete one unpaid at its deadline too), its
 * first session's part recorded on the expired bill as owed back (`amountToRefund`); the billing
 * process then completes the session as is, so its page no longer asks for the rest and money sent
 * after is late. A renewal part-paid at its due time is past due.
 */
export function subscriptionTimerHandlers(
  commands: CommandHandler,
  deps: { readStore: ReadStore; gate?: ChainReadGate },
): Record<string, TimerHandler> {
  const sessions = deps.readStore.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions);

  /** The latest bill, from the subscription's log, while it is open and the subscription in one of `statuses`. */
  async function openBill(
    timer: TimerDoc,
    ctx: CommandContext,
    statuses: readonly SubscriptionStatus[],
  ): Promise<SubscriptionBill | null> {
    const { state } = await commands.load(subscriptionAggregate, timer.recordId, ctx);
    const bill = state.context.subscription?.latestInvoice ?? null;
    return statuses.some((status) => state.matches(status)) && bill?.status === 'open' ? bill : null;
  }

  /** The read-model documents of the bill's sessions: the first checkout session, or an invoice's pay pages. */
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

  /**
   * Whether the bill's lapse waits: for the chain followers, or for a payment one of its sessions
   * `holds`; `position` of the first session's expiry when this recorded it.
   */
  async function lapseWaits(
    bill: SubscriptionBill,
    ctx: CommandContext,
    holds: (session: CheckoutSessionSnapshot) => boolean,
  ): Promise<{ waits: boolean; position: bigint | null; amountReceived?: string }> {
    const docs = await sessionsOf(bill, ctx);
    const networks = docs
      .filter((doc) => doc.status !== 'complete')
      .flatMap((doc) => doc.addresses.map((address) => address.network));
    if (deps.gate && (await deps.gate.holds(networks, Date.parse(billLapsesAt(bill)))))
      return { waits: true, position: null };
    if (bill.kind === 'checkout_session') {
      const { state, position } = await commands.handle(
        checkoutSessionAggregate,
        bill.id,
        { type: 'ExpireCheckoutSession' },
        ctx,
      );
      const received = state.matches('incomplete') ? state.context.session?.amountReceived : undefined;
      return {
        waits: state.matches('open') || holds(state),
        position,
        ...(received !== undefined && { amountReceived: received }),
      };
    }
    for (const doc of docs) {
      if (holds((await commands.load(checkoutSessionAggregate, doc.id, ctx)).state))
        return { waits: true, position: null };
    }
    return { waits: false, position: null };
  }

  async function expireFirstPayment(timer: TimerDoc, ctx: CommandContext): Promise<Waited> {
    const bill = await openBill(timer, ctx, ['incomplete']);
    let sessionExpiry: bigint | null = null;
    let part: { amountReceived?: string } = {};
    if (bill) {
      const { waits, position, amountReceived } = await lapseWaits(bill, ctx, holdsFirstPayment);
      if (waits) return { notYet: true };
      sessionExpiry = position;
      if (amountReceived !== undefined) part = { amountReceived };
    }
    const expire = { type: 'ExpireFirstPayment' as const, ...part };
    const expired = await commands.handle(subscriptionAggregate, timer.recordId, expire, ctx);
    return { position: expired.position ?? sessionExpiry };
  }

  async function markRenewalPaymentMissed(timer: TimerDoc, ctx: CommandContext): Promise<Waited> {
    const bill = await openBill(timer, ctx, ['active', 'trialing']);
    if (bill?.kind === 'invoice' && (await lapseWaits(bill, ctx, holdsPayment)).waits) return { notYet: true };
    return commands.handle(subscriptionAggregate, timer.recordId, { type: 'MarkRenewalPaymentMissed' }, ctx);
  }

  return {
    [SUBSCRIPTION_TIMERS.expireFirst]: expireFirstPayment,
    [SUBSCRIPTION_TIMERS.pastDue]: markRenewalPaymentMissed,
    ...Object.fromEntries(
      Object.entries(COMMANDS).map(([kind, commandOf]): [string, TimerHandler] => [
        kind,
        (timer, ctx) => commands.handle(subscriptionAggregate, timer.recordId, commandOf(timer), ctx),
      ]),
    ),
  };
}
