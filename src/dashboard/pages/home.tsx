import type { CheckoutSessionDoc, WebhookDeliveryDoc, WebhookEndpointDoc } from '../../projections/collections.ts';
import {
  allSentBefore,
  amountOf,
  confirmingAfterClose,
  hasLateToSettle,
  lateMoney,
} from '../../../machines/checkout-session.late.ts';
import { runReport } from '../../reports/report-pipelines.ts';
import { COLLECTIONS } from '../../projections/collections.ts';
import { TRANSACTIONS, type PaymentTransactionDoc } from '../../projections/transactions.projection.ts';
import { INVOICES, type InvoiceDoc } from '../../projections/invoices.projection.ts';
import { everyNetwork } from '../../chain-ingest/rail.ts';
import type { DashboardContext, DashboardDeps, DashboardTenant } from '../context.ts';
import { isHtmx, sendHtml } from '../http.ts';
import { definePage } from '../page.ts';
import { latestWithLateToSettle, withInvoicesPaidLate } from '../invoices-paid-late.ts';
import { utcOf, zonedDate, zonedMidnight } from '../../shared/time-zone.ts';
import { quotientHalfUp } from '../../shared/decimal.ts';
import { BarChart, type ChartDay } from '../ui/chart.tsx';
import {
  Badge,
  Card,
  DateTime,
  EmptyState,
  Live,
  money,
  paymentAmountOf,
  ShortId,
  TableScroll,
} from '../ui/components.tsx';
import { DeliveryStatus } from '../ui/delivery-status.tsx';
import { AppLayout } from '../ui/layout.tsx';
import { FilterForm, withQuery } from '../ui/list-controls.tsx';
import { chooseTimeZone, TimeZoneField } from '../ui/time-zone-field.tsx';

const DAYS = 30;
const OVERVIEW_PATH = '/dashboard/home/overview';
const RECENT_PAYMENTS_PATH = '/dashboard/home/recent-payments';
const WEBHOOK_FAILURES_PATH = '/dashboard/home/webhook-failures';
const LIST = 8;

type Day = {
  day: string;
  volume: bigint;
  /** The day's volume in the other currencies: the bar is of the main one, the figures list them all. */
  otherVolumes: { currency: string; volume: bigint }[];
  payments: number;
  created: number;
  completed: number;
  medianSeconds: number | null;
  p95Seconds: number | null;
};

export type Overview = {
  currency: string | null;
  days: Day[];
  volume: bigint;
  payments: number;
  /** Volume in the other currencies, when payments came in more than one. */
  others: { currency: string; volume: bigint }[];
  created: number;
  completed: number;
  timeToPay: { payments: number; medianSeconds: number | null; p95Seconds: number | null };
};

const number = (value: string | number | null | undefined): number => Number(value ?? 0);
const seconds = (value: string | number | null | undefined): number | null =>
  value === null || value === undefined ? null : Number(value);

/**
 * The last 30 days of `timeZone` (today included) as dates and the instants they start at, which
 * the reports give as each day's period.
 */
export function lastDays(now: number, timeZone: string): { day: string; start: string }[] {
  const [year, month, date] = zonedDate(now, timeZone).split('-').map(Number) as [number, number, number];
  return Array.from({ length: DAYS }, (_, i) => {
    const day = new Date(utcOf(year, month - 1, date - (DAYS - 1 - i))).toISOString().slice(0, 10);
    const start = zonedMidnight(year, month, date - (DAYS - 1 - i), timeZone);
    return { day, start: new Date(start).toISOString() };
  });
}

/**
 * The last 30 days (today included) in the analyst's time zone from the analysts' reports (`GET
 * /api/v1/reports/*?timezone=`, the same pipelines): volume by day in the currency with the most,
 * payments, conversion and time to pay.
 */
async function overview(deps: DashboardDeps, tenant: DashboardTenant, timeZone: string): Promise<Overview> {
  const calendar = lastDays(deps.clock.now(), timeZone);
  const params = { ...tenant, interval: 'day', groupBy: 'none', from: calendar[0]!.start, timeZone } as const;
  const [volume, conversion, timeToPay, whole] = await Promise.all([
    runReport(deps.readStore, 'volume', { ...params, groupBy: 'currency' }),
    runReport(deps.readStore, 'conversion', params),
    runReport(deps.readStore, 'time-to-pay', params),
    runReport(deps.readStore, 'time-to-pay', { ...params, interval: 'all' }),
  ]);
  const totals = new Map<string, bigint>();
  for (const row of volume) totals.set(row.currency, (totals.get(row.currency) ?? 0n) + BigInt(row.grossVolume ?? 0));
  const ranked = [...totals].map(([currency, amount]) => ({ currency, volume: amount }));
  ranked.sort((a, b) => (b.volume > a.volume ? 1 : b.volume < a.volume ? -1 : 0));
  const main = ranked[0]?.currency ?? null;
  // A day's rows are those of the period starting at its midnight in the zone.
  const days = calendar.map(({ day, start }): Day => {
    const sales = volume.filter((row) => row.period === start);
    const converted = conversion.find((row) => row.period === start);
    const paid = timeToPay.find((row) => row.period === start);
    return {
      day,
      volume: BigInt(sales.find((row) => row.currency === main)?.grossVolume ?? 0),
      otherVolumes: sales
        .filter((row) => row.currency !== main && BigInt(row.grossVolume ?? 0) > 0n)
        .map((row) => ({ currency: row.currency, volume: BigInt(row.grossVolume ?? 0) })),
      payments: sales.reduce((sum, row) => sum + number(row.payments), 0),
      created: number(converted?.created),
      completed: number(converted?.completed),
      medianSeconds: seconds(paid?.medianSeconds),
      p95Seconds: seconds(paid?.p95Seconds),
    };
  });
  const sum = (pick: (day: Day) => number) => days.reduce((total, day) => total + pick(day), 0);
  return {
    currency: main,
    days,
    volume: ranked[0]?.volume ?? 0n,
    payments: sum((d) => d.payments),
    others: ranked.slice(1),
    created: sum((d) => d.created),
    completed: sum((d) => d.completed),
    timeToPay: {
      payments: number(whole[0]?.payments),
      medianSeconds: seconds(whole[0]?.medianSeconds),
      p95Seconds: seconds(whole[0]?.p95Seconds),
    },
  };
}

/** A duration as a person says it: 45 s, 4 min 10 s, 2 h 5 min, 3 d 4 h. */
function duration(total: number): string {
  const s = Math.round(total);
  if (s < 60) return `${s} s`;
  if (s < 3600) return s % 60 === 0 ? `${s / 60} min` : `${Math.floor(s / 60)} min ${s % 60} s`;
  const m = Math.round(s / 60);
  if (m < 24 * 60) return m % 60 === 0 ? `${m / 60} h` : `${Math.floor(m / 60)} h ${m % 60} min`;
  const h = Math.round(m / 60);
  return h % 24 === 0 ? `${h / 24} d` : `${Math.floor(h / 24)} d ${h % 24} h`;
}

/** A share of two counts with one decimal, rounded half up in integers as the reports round theirs (2 of 3: 66.7%). */
const percent = (part: number, whole: number): string => `${quotientHalfUp(part * 100, whole, 1) ?? '—'}%`;
const plural = (count: number, one: string, many = `${one}s`) => `${count} ${count === 1 ? one : many}`;

export function OverviewPanel({ data }: { data: Overview }): JSX.Element {
  // No currency while nothing was received in the 30 days: no figure is labelled with one made up.
  const { currency } = data;
  const inMain = (amount: bigint) => (currency === null ? 'nothing received' : money(amount, currency));
  const volumeDays: ChartDay[] = data.days.map((d) => ({
    day: d.day,
    value: d.volume,
    // Amounts of different currencies are never added: the others are named beside the main one.
    label:
      d.otherVolumes.length > 0
        ? `${inMain(d.volume)}, also ${d.otherVolumes.map((o) => money(o.volume, o.currency)).join(', ')}`
        : inMain(d.volume),
    happened: d.volume > 0n || d.otherVolumes.length > 0,
  }));
  const countDays: ChartDay[] = data.days.map((d) => ({
    day: d.day,
    value: BigInt(d.payments),
    label: plural(d.payments, 'payment'),
  }));
  const conversionDays: ChartDay[] = data.days.map((d) => ({
    day: d.day,
    // Per mille of the day's sessions completed (paid in full, or completed with the amount received), in integers.
    value: d.created === 0 ? 0n : (BigInt(d.completed) * 1000n) / BigInt(d.created),
    label:
      d.created === 0 ? 'no sessions' : `${d.completed} of ${d.created} completed (${percent(d.completed, d.created)})`,
    happened: d.created > 0,
  }));
  const timeDays: ChartDay[] = data.days.map((d) => ({
    day: d.day,
    value: BigInt(Math.round(d.medianSeconds ?? 0)),
    label:
      d.medianSeconds === null
        ? 'no payments'
        : `median ${duration(d.medianSeconds)}, p95 ${duration(d.p95Seconds ?? d.medianSeconds)}`,
    happened: d.medianSeconds !== null,
  }));
  const { timeToPay } = data;
  return (
    <div class="grid grid-2" id="overview">
      <Card title="Volume, last 30 days" id="volume">
        <div class="stat">
          <span class="stat-value" safe>
            {currency === null ? '0' : money(data.volume, currency)}
          </span>
          <span class="stat-note">
            {data.others.length > 0
              ? `Also ${data.others.map((o) => money(o.volume, o.currency)).join(', ')}`
              : 'Money received in confirmed payments, by the day each was confirmed, late ones included'}
          </span>
        </div>
        <BarChart
          days={volumeDays}
          summary={`Gross volume per day over the last 30 days${currency === null ? '' : `, in ${currency.toUpperCase()}`}`}
          figures="Gross volume"
        />
      </Card>
      <Card title="Payments, last 30 days" id="payments-count">
        <div class="stat">
          <span class="stat-value">{data.payments}</span>
          {/* The volume report's count: transfers, as the volume beside it sums them (not sessions). */}
          <span class="stat-note">Confirmed payments received; a session paid in two transfers counts two</span>
        </div>
        <BarChart days={countDays} summary="Confirmed payments per day over the last 30 days" figures="Payments" />
      </Card>
      <Card title="Conversion, last 30 days" id="conversion">
        <div class="stat">
          <span class="stat-value" safe>
            {data.created === 0 ? '—' : percent(data.completed, data.created)}
          </span>
          <span class="stat-note" safe>
            {data.created === 0
              ? 'No checkout sessions created yet'
              : `${data.completed} of ${plural(data.created, 'checkout session')} created were completed: paid in full, or with the amount received`}
          </span>
        </div>
        <BarChart
          days={conversionDays}
          summary="Share of the day's checkout sessions that were completed, per day over the last 30 days"
          figures="Completed"
        />
      </Card>
      <Card title="Time to pay, last 30 days" id="time-to-pay">
        <div class="stat">
          <span class="stat-value" safe>
            {timeToPay.medianSeconds === null ? '—' : duration(timeToPay.medianSeconds)}
          </span>
          <span class="stat-note" safe>
            {/* Completion, as conversion counts it: a session completed with the amount received is not paid in full. */}
            {timeToPay.medianSeconds === null
              ? 'From a session’s creation to its completion'
              : `Median from creation to completion; p95 ${duration(timeToPay.p95Seconds ?? timeToPay.medianSeconds)}, over ${plural(timeToPay.payments, 'completed session')}`}
          </span>
        </div>
        <BarChart
          days={timeDays}
          summary="Median time from a checkout session's creation to its completion, per day over the last 30 days"
          figures="Time to pay"
        />
      </Card>
    </div>
  );
}

const PAYMENT_STATUS: Record<PaymentTransactionDoc['status'], { tone: 'success' | 'info' | 'danger'; text: string }> = {
  pending: { tone: 'info', text: 'Confirming' },
  confirmed: { tone: 'success', text: 'Confirmed' },
  withdrawn: { tone: 'danger', text: 'Withdrawn' },
};

/** A session's page: its payments, and what can be done about it. */
const sessionPath = (id: string): string => `/dashboard/checkout-sessions/${encodeURIComponent(id)}`;

/** A session's short id, linking to its page. */
const SessionLink = ({ id }: { id: string }): JSX.Element => (
  <a href={sessionPath(id)} aria-label={`Session ${id}`}>
    <ShortId value={id} keep={6} />
  </a>
);

function RecentPayments({
  payments,
  networks,
  timeZone,
}: {
  payments: PaymentTransactionDoc[];
  networks: Map<string, string>;
  timeZone: string;
}) {
  return (
    <Card
      title="Recent payments"
      id="recent-payments"
      actions={
        <span class="live-state">
          <span class="on">Live</span>
          <span class="off">Not live</span>
        </span>
      }
    >
      {payments.length === 0 ? (
        <EmptyState message="No payments yet." hint="Payments to your checkout sessions show here as they arrive." />
      ) : (
        <TableScroll label="Recent payments, newest first">
          <table>
            <thead>
              <tr>
                <th class="amount">Amount</th>
                <th>Status</th>
                <th class="hide-narrow">Network</th>
                <th class="hide-narrow">From</th>
                <th>Seen</th>
              </tr>
            </thead>
            <tbody>
              {payments.map((p) => (
                <tr>
                  {/* The amount leads to the session it paid (a column more would not fit at 390 px). */}
                  <td class="amount">
                    <a
                      href={sessionPath(p.checkoutSessionId)}
                      aria-label={`${paymentAmountOf(p, p.currency)}, session ${p.checkoutSessionId}`}
                      safe
                    >
                      {paymentAmountOf(p, p.currency)}
                    </a>
                  </td>
                  {/* Late goes under Confirmed when narrow, rather than pushing Seen out of the card. */}
                  <td>
                    <Badge tone={PAYMENT_STATUS[p.status].tone} label={PAYMENT_STATUS[p.status].text} />
                    {p.late ? (
                      <>
                        {' '}
                        <Badge tone="warning" label="Late" />
                      </>
                    ) : (
                      ''
                    )}
                  </td>
                  <td class="hide-narrow" safe>
                    {networks.get(p.network) ?? p.network}
                  </td>
                  <td class="hide-narrow">
                    <ShortId value={p.fromAddress} />
                  </td>
                  {/* May break after the day at 390 px, where one line more fits better than a cut column. */}
                  <td>
                    <DateTime iso={p.createdAt} timeZone={timeZone} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
    </Card>
  );
}

/**
 * A session to act on: underpaid, overpaid, paid after it closed (`payments`: how many late
 * payments to settle), or with payments still confirming after it closed (how many: nothing to
 * settle yet, but late money once final); or a renewal Weir could not finalize, which waits for the merchant to finalize it.
 */
type NeedsAction =
  | { session: CheckoutSessionDoc; reason: 'underpaid'; at: string }
  | { session: CheckoutSessionDoc; reason: 'overpaid'; at: string }
  | { session: CheckoutSessionDoc; reason: 'late' | 'confirming'; at: string; payments: number }
  | { invoice: InvoiceDoc; reason: 'not_finalized'; at: string };

/** A renewal left a draft: its invoice page says why and has the Finalize button. */
const NotFinalizedRow = ({ invoice }: { invoice: InvoiceDoc }): JSX.Element => (
  <tr>
    <td>
      <div class="stacked">
        <a href={`/dashboard/invoices/${invoice.id}`} safe>{`Invoice ${invoice.number}`}</a>
        <Badge tone="danger" label="Renewal not finalized" />
      </div>
    </td>
    <td class="amount">
      <span safe>{money(invoice.amountDue, invoice.currency)}</span> <div class="muted small">not sent</div>
    </td>
  </tr>
);

/**
 * Late money is not in amountReceived: the row shows what there is to settle, or what is still
 * confirming (how it came: paid late, or sent before the close and confirmed after it).
 */
function ClosedMoneyAmount({ item }: { item: NeedsAction & { reason: 'late' | 'confirming' } }): JSX.Element {
  const { session, payments } = item;
  const came = item.reason === 'late' ? lateMoney(session) : confirmingAfterClose(session);
  const count = payments === 1 ? '' : ` in ${payments} payments`;
  // Confirming, as its badge says: the note tells it is not money to settle yet.
  const note =
    item.reason === 'confirming'
      ? `${count.trim()}${count ? ', ' : ''}not final yet`
      : `${allSentBefore(came) ? `sent before ${came.close}` : 'paid late'}${count}`;
  return (
    <>
      <span safe>{amountOf(came, (a) => money(a, session.currency))}</span>{' '}
      <div class="muted small" safe>
        {note}
      </div>
    </>
  );
}

export function SessionsNeedingAction({ items }: { items: NeedsAction[] }): JSX.Element {
  return (
    <Card title="Needs action" id="needs-action">
      {items.length === 0 ? (
        <EmptyState
          message="Nothing needs your attention."
          hint="Underpaid and overpaid sessions, payments after a session closed and renewals Weir could not finalize show here."
        />
      ) : (
        <TableScroll label="Needing action, latest first">
          <table>
            <thead>
              <tr>
                <th>What and why</th>
                <th class="amount">Amount</th>
              </tr>
            </thead>
            <tbody>
              {items.map((item) =>
                item.reason === 'not_finalized' ? (
                  <NotFinalizedRow invoice={item.invoice} />
                ) : (
                  <tr>
                    {/* Why under the session, and received over asked: two narrow columns fit half the page and 390 px. */}
                    <td>
                      <div class="stacked">
                        <SessionLink id={item.session.id} />
                        {item.reason === 'underpaid' ? (
                          <Badge tone="warning" label="Underpaid" />
                        ) : item.reason === 'overpaid' ? (
                          <Badge tone="warning" label="Overpaid" />
                        ) : item.reason === 'confirming' ? (
                          <Badge tone="info" label="Confirming after it closed" />
                        ) : (
                          <Badge
                            tone="danger"
                            label={
                              allSentBefore(lateMoney(item.session))
                                ? `Confirmed after ${lateMoney(item.session).close}`
                                : 'Paid after it closed'
                            }
                          />
                        )}
                      </div>
                    </td>
                    <td class="amount">
                      {item.reason === 'underpaid' ? (
                        <>
                          <span safe>{money(item.session.amountReceived, item.session.currency)}</span>{' '}
                          <div
                            class="muted small"
                            safe
                          >{`of ${money(item.session.amountTotal, item.session.currency)}`}</div>
                        </>
                      ) : item.reason === 'overpaid' ? (
                        <>
                          <span safe>{money(item.session.amountOverpaid, item.session.currency)}</span>{' '}
                          <div class="muted small">over the total, to refund</div>
                        </>
                      ) : (
                        <ClosedMoneyAmount item={item} />
                      )}
                    </td>
                  </tr>
                ),
              )}
            </tbody>
          </table>
        </TableScroll>
      )}
    </Card>
  );
}

/** What the endpoint last answered: its HTTP status, or why there was none. */
const lastAnswer = (last: WebhookDeliveryDoc['log'][number] | undefined): string =>
  last ? (last.statusCode ? `HTTP ${last.statusCode}` : (last.error ?? 'no answer')) : '—';

/** Deliveries that failed or are retried, each labelled as every other page labels a delivery. */
export function WebhookFailures(props: {
  deliveries: WebhookDeliveryDoc[];
  endpoints: Map<string, string>;
  timeZone: string;
}): JSX.Element {
  return (
    <Card title="Webhook failures" id="webhook-failures">
      {props.deliveries.length === 0 ? (
        <EmptyState
          message="Every webhook was delivered."
          hint="Deliveries that failed or are being retried show here."
        />
      ) : (
        <TableScroll label="Webhook failures, newest first">
          <table>
            <thead>
              <tr>
                <th>Event</th>
                <th>Last answer</th>
              </tr>
            </thead>
            <tbody>
              {props.deliveries.map((d) => (
                <tr>
                  <td>
                    <div class="stacked">
                      <code safe>{d.eventType}</code>
                      <span class="muted small" safe>
                        {props.endpoints.get(d.endpointId) ?? d.endpointId}
                      </span>
                    </div>
                  </td>
                  <td>
                    <div class="stacked">
                      {/* An error can be one long word (a host name): it wraps, three lines at most, the whole in its title. */}
                      <span class="clamp" title={lastAnswer(d.log.at(-1))} safe>
                        {lastAnswer(d.log.at(-1))}
                      </span>
                      <DeliveryStatus delivery={d} timeZone={props.timeZone} />
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
    </Card>
  );
}

/** The last payments, their times in the page's zone (the refresh carries it as `?timezone=`, checked again: it is a URL). */
async function recentPayments(deps: DashboardDeps, tenant: DashboardTenant, timeZone: string) {
  const payments = await deps.readStore
    .collection<PaymentTransactionDoc>(TRANSACTIONS)
    .find({ ...tenant, type: 'incoming' }, { sort: { createdAt: -1, blockNumber: -1, logIndex: -1 }, limit: LIST });
  const networks = new Map(everyNetwork(deps.rail).map((n) => [n.network, n.name]));
  return { payments, networks, timeZone };
}

/**
 * Underpaid sessions, sessions paid after they closed with that money not marked refunded, sessions
 * with a payment still confirming after they closed (to watch: late money once final, listed for the
 * money to settle alone when there is also some), and
 * overpaid ones (the excess to refund), each once (a session paid late twice is one thing to settle),
 * latest first: a late or overpaid one by its last payment. Money after a short completion is not
 * among them: it only makes up the total (past it is the excess), the merchant's to keep. Also
 * renewals left drafts because Weir could not finalize them (it does not retry them: the merchant
 * must), by their refusal.
 */
export async function needsAction(deps: Pick<DashboardDeps, 'readStore'>, tenant: DashboardTenant) {
  const sessions = deps.readStore.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions);
  const underpaid = await sessions.find({ ...tenant, status: 'incomplete' }, { sort: { updatedAt: -1 }, limit: LIST });
  const [toSettle, overpaid, confirming] = await Promise.all([
    // Late money a mark of refunded covers, or that paid the session's invoice, is not to settle: the
    // read store leaves those sessions out, so however many there are, a page of the others is found.
    latestWithLateToSettle(deps.readStore, tenant, LIST),
    sessions.find(
      { ...tenant, status: 'complete', amountOverpaid: { $ne: '0' } },
      { sort: { updatedAt: -1 }, limit: LIST },
    ),
    // Still confirming after the close: not money to settle yet, but the merchant watches it (rare,
    // as late money is: a page of them is read, those also paid late are listed for that below).
    sessions.find(
      { ...tenant, status: { $in: ['expired', 'canceled'] }, payments: { $elemMatch: { status: 'pending' } } },
      { sort: { updatedAt: -1 }, limit: LIST },
    ),
  ]);
  // Late money that paid the session's invoice is the invoice's, not money to settle.
  const [closedPaid, closedConfirming] = await Promise.all([
    withInvoicesPaidLate(deps.readStore, tenant, toSettle),
    withInvoicesPaidLate(deps.readStore, tenant, confirming),
  ]);
  // Listed for late money to settle (dust included), so a session also confirming is not listed twice.
  const late = closedPaid.sessions.filter(hasLateToSettle);
  const lastConfirmed = (payments: CheckoutSessionDoc['payments']) =>
    payments.map((p) => p.confirmedAt ?? p.detectedAt).reduce((a, b) => (b > a ? b : a));
  const notFinalized = await deps.readStore
    .collection<InvoiceDoc>(INVOICES)
    .find(
      { ...tenant, status: 'draft', deletedAt: null, lastFinalizationError: { $ne: null } },
      { sort: { updatedAt: -1 }, limit: LIST },
    );
  const items: NeedsAction[] = [
    ...underpaid.map((session) => ({ session, reason: 'underpaid' as const, at: session.updatedAt })),
    ...late.map((session) => {
      const { payments } = lateMoney(session);
      return { session, reason: 'late' as const, at: lastConfirmed(payments), payments: payments.length };
    }),
    // Once per session: one with late money to settle is listed for that.
    ...closedConfirming.sessions
      .filter((session) => !hasLateToSettle(session))
      .map((session) => {
        const { payments } = confirmingAfterClose(session);
        return { session, reason: 'confirming' as const, at: lastConfirmed(payments), payments: payments.length };
      }),
    ...overpaid.map((session) => ({
      session,
      reason: 'overpaid' as const,
      at: lastConfirmed(session.payments.filter((p) => p.status === 'confirmed')),
    })),
    ...notFinalized.map((invoice) => ({
      invoice,
      reason: 'not_finalized' as const,
      at: invoice.lastFinalizationError?.at ?? invoice.updatedAt,
    })),
  ];
  items.sort((a, b) => b.at.localeCompare(a.at));
  return { items: items.slice(0, LIST) };
}

async function webhookFailures(deps: DashboardDeps, tenant: DashboardTenant, timeZone: string) {
  const deliveries = await deps.readStore
    .collection<WebhookDeliveryDoc>(COLLECTIONS.webhookDeliveries)
    .find(
      { ...tenant, $or: [{ status: 'failed' }, { status: 'pending', attempts: { $gt: 0 } }] },
      { sort: { createdAt: -1 }, limit: LIST },
    );
  const endpoints = await deps.readStore
    .collection<WebhookEndpointDoc>(COLLECTIONS.webhookEndpoints)
    .find({ ...tenant, id: { $in: [...new Set(deliveries.map((d) => d.endpointId))] } });
  return { deliveries, endpoints: new Map(endpoints.map((e) => [e.id, e.url])), timeZone };
}

/** A panel as htmx asks for it (refreshed live); the whole page otherwise. */
const fragment =
  <T extends object>(
    load: (deps: DashboardDeps, tenant: DashboardTenant, timeZone: string) => Promise<T>,
    Panel: (props: T) => JSX.Element,
  ) =>
  (deps: DashboardDeps) =>
  async (ctx: DashboardContext) => {
    if (!isHtmx(ctx)) return ctx.redirect('/dashboard');
    const props: T = await load(deps, ctx.state.tenant, ctx.state.timeZone);
    await sendHtml(ctx, <Panel {...props} />);
  };

/**
 * Home: volume, payment count, conversion and time to pay over 30 days, recent payments, what needs action (underpaid
 * sessions, sessions paid or still confirming after they closed, renewals not finalized) and webhook failures, each panel refreshed live when its read model changes.
 */
export const page = definePage({
  screen: 'home',
  routes(routes, deps) {
    routes.get('/dashboard', 'read', async (ctx) => {
      const { tenant } = ctx.state;
      // A zone applied here becomes the dashboard's: every page shows its times in it from now on.
      const { zone, error } = chooseTimeZone(ctx, deps.publicUrl);
      const [data, payments, action, webhooks] = await Promise.all([
        overview(deps, tenant, zone),
        recentPayments(deps, tenant, zone),
        needsAction(deps, tenant),
        webhookFailures(deps, tenant, zone),
      ]);
      await sendHtml(
        ctx,
        <AppLayout ctx={ctx} title="Home" screen="home">
          <Card id="report-time-zone" class="filters-card filters-card-narrow">
            <FilterForm path="/dashboard" label="Days of the figures">
              <TimeZoneField value={zone} error={error} />
            </FilterForm>
          </Card>
          <Live url={withQuery(OVERVIEW_PATH, { timezone: zone })} topics={['checkout-sessions']}>
            <OverviewPanel data={data} />
          </Live>
          <Live url={withQuery(RECENT_PAYMENTS_PATH, { timezone: zone })} topics={['payments']}>
            <RecentPayments {...payments} />
          </Live>
          <div class="grid grid-2">
            <Live url="/dashboard/home/needs-action" topics={['checkout-sessions', 'payments', 'invoices']}>
              <SessionsNeedingAction {...action} />
            </Live>
            <Live url={withQuery(WEBHOOK_FAILURES_PATH, { timezone: zone })} topics={['webhooks']}>
              <WebhookFailures {...webhooks} />
            </Live>
          </div>
        </AppLayout>,
        error ? 400 : 200,
      );
    });
    // The zone the page was drawn in comes back with each refresh (`?timezone=`, read into `ctx.state.timeZone`).
    routes.get(
      OVERVIEW_PATH,
      'read',
      fragment(async (d, tenant, timeZone) => ({ data: await overview(d, tenant, timeZone) }), OverviewPanel)(deps),
    );
    routes.get(RECENT_PAYMENTS_PATH, 'read', fragment(recentPayments, RecentPayments)(deps));
    routes.get('/dashboard/home/needs-action', 'read', fragment(needsAction, SessionsNeedingAction)(deps));
    routes.get(WEBHOOK_FAILURES_PATH, 'read', fragment(webhookFailures, WebhookFailures)(deps));
  },
});
