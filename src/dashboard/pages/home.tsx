import type { CheckoutSessionDoc, WebhookDeliveryDoc, WebhookEndpointDoc } from '../../projections/collections.ts';
import { COLLECTIONS } from '../../projections/collections.ts';
import { TRANSACTIONS, type PaymentTransactionDoc } from '../../projections/transactions.projection.ts';
import { everyNetwork } from '../../chain-ingest/rail.ts';
import type { DashboardContext, DashboardDeps, DashboardTenant } from '../context.ts';
import { isHtmx, sendHtml } from '../http.ts';
import { definePage } from '../page.ts';
import { BarChart, type ChartDay } from '../ui/chart.tsx';
import { Badge, Card, DateTime, EmptyState, Live, money, ShortId, TableScroll } from '../ui/components.tsx';
import { AppLayout } from '../ui/layout.tsx';

const DAY_MS = 86_400_000;
const DAYS = 30;
const LIST = 8;

type Overview = {
  currency: string | null;
  days: { day: string; volume: bigint; count: number }[];
  volume: bigint;
  count: number;
  /** Volume in the other currencies, when payments came in more than one. */
  others: { currency: string; volume: bigint }[];
};

/** Completed sessions of the last 30 days (today included, UTC), by day, in the currency with the most volume. */
async function overview(deps: DashboardDeps, tenant: DashboardTenant): Promise<Overview> {
  const today = Math.floor(deps.clock.now() / DAY_MS) * DAY_MS;
  const first = new Date(today - (DAYS - 1) * DAY_MS).toISOString();
  const rows = await deps.readStore
    .collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions)
    .aggregate([
      { $match: { ...tenant, status: 'complete', completedAt: { $gte: first } } },
      { $project: { _id: 0, completedAt: 1, currency: 1, amountReceived: 1 } },
    ]);
  const byCurrency = new Map<string, Map<string, { volume: bigint; count: number }>>();
  for (const row of rows as { completedAt: string; currency: string; amountReceived: string }[]) {
    const days = byCurrency.get(row.currency) ?? new Map<string, { volume: bigint; count: number }>();
    byCurrency.set(row.currency, days);
    const day = row.completedAt.slice(0, 10);
    const cell = days.get(day) ?? { volume: 0n, count: 0 };
    days.set(day, { volume: cell.volume + BigInt(row.amountReceived), count: cell.count + 1 });
  }
  const totals = [...byCurrency].map(([currency, days]) => ({
    currency,
    volume: [...days.values()].reduce((sum, d) => sum + d.volume, 0n),
  }));
  totals.sort((a, b) => (b.volume > a.volume ? 1 : b.volume < a.volume ? -1 : 0));
  const main = totals[0]?.currency ?? null;
  const counts = new Map<string, number>();
  for (const days of byCurrency.values())
    for (const [day, cell] of days) counts.set(day, (counts.get(day) ?? 0) + cell.count);
  const days = Array.from({ length: DAYS }, (_, i) => {
    const day = new Date(today - (DAYS - 1 - i) * DAY_MS).toISOString().slice(0, 10);
    return { day, volume: (main && byCurrency.get(main)?.get(day)?.volume) || 0n, count: counts.get(day) ?? 0 };
  });
  return {
    currency: main,
    days,
    volume: totals[0]?.volume ?? 0n,
    count: rows.length,
    others: totals.slice(1),
  };
}

function OverviewPanel({ data }: { data: Overview }): JSX.Element {
  const currency = data.currency ?? 'usdc';
  const volumeDays: ChartDay[] = data.days.map((d) => ({
    day: d.day,
    value: d.volume,
    label: money(d.volume, currency),
  }));
  const countDays: ChartDay[] = data.days.map((d) => ({
    day: d.day,
    value: BigInt(d.count),
    label: `${d.count} payment${d.count === 1 ? '' : 's'}`,
  }));
  return (
    <div class="grid grid-2" id="overview">
      <Card title="Volume, last 30 days" id="volume">
        <div class="stat">
          <span class="stat-value" safe>
            {money(data.volume, currency)}
          </span>
          <span class="stat-note">
            {data.others.length > 0
              ? `Also ${data.others.map((o) => money(o.volume, o.currency)).join(', ')}`
              : 'Received by completed checkout sessions'}
          </span>
        </div>
        <BarChart days={volumeDays} summary={`Volume per day over the last 30 days, in ${currency.toUpperCase()}`} />
      </Card>
      <Card title="Payments, last 30 days" id="payments-count">
        <div class="stat">
          <span class="stat-value">{data.count}</span>
          <span class="stat-note">Checkout sessions paid in full</span>
        </div>
        <BarChart days={countDays} summary="Completed checkout sessions per day over the last 30 days" />
      </Card>
    </div>
  );
}

const PAYMENT_STATUS: Record<PaymentTransactionDoc['status'], { tone: 'success' | 'info' | 'danger'; text: string }> = {
  pending: { tone: 'info', text: 'Confirming' },
  confirmed: { tone: 'success', text: 'Confirmed' },
  withdrawn: { tone: 'danger', text: 'Withdrawn' },
};

function RecentPayments({ payments, networks }: { payments: PaymentTransactionDoc[]; networks: Map<string, string> }) {
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
        <TableScroll label="Recent payments">
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
                  <td class="amount" safe>
                    {money(p.amount, p.currency ?? '')}
                  </td>
                  <td class="nowrap">
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
                  <td class="nowrap">
                    <DateTime iso={p.createdAt} />
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

type NeedsAction = { session: CheckoutSessionDoc; reason: 'underpaid' | 'late'; at: string };

function SessionsNeedingAction({ items }: { items: NeedsAction[] }): JSX.Element {
  return (
    <Card title="Sessions needing action" id="needs-action">
      {items.length === 0 ? (
        <EmptyState message="Nothing needs your attention." hint="Underpaid sessions and late payments show here." />
      ) : (
        <TableScroll label="Sessions needing action">
          <table>
            <thead>
              <tr>
                <th>Session</th>
                <th>Why</th>
                <th class="amount">Received</th>
              </tr>
            </thead>
            <tbody>
              {items.map(({ session, reason }) => (
                <tr>
                  <td>
                    <ShortId value={session.id} keep={8} />
                  </td>
                  <td>
                    {reason === 'underpaid' ? (
                      <Badge tone="warning" label="Underpaid" />
                    ) : (
                      <Badge tone="danger" label="Paid after it closed" />
                    )}
                  </td>
                  <td class="amount" safe>
                    {`${money(session.amountReceived, session.currency)} of ${money(session.amountTotal, session.currency)}`}
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

/** What the endpoint last answered: its HTTP status, or why there was none. */
const lastAnswer = (last: WebhookDeliveryDoc['log'][number] | undefined): string =>
  last ? (last.statusCode ? `HTTP ${last.statusCode}` : (last.error ?? 'no answer')) : '—';

function WebhookFailures(props: { deliveries: WebhookDeliveryDoc[]; endpoints: Map<string, string> }): JSX.Element {
  return (
    <Card title="Webhook failures" id="webhook-failures">
      {props.deliveries.length === 0 ? (
        <EmptyState
          message="Every webhook was delivered."
          hint="Deliveries that failed or are being retried show here."
        />
      ) : (
        <TableScroll label="Webhook failures">
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
                      <span safe>{lastAnswer(d.log.at(-1))}</span>
                      {d.status === 'failed' ? (
                        <Badge tone="danger" label="Failed" />
                      ) : (
                        <Badge
                          tone="warning"
                          label={`Retrying (${d.attempts} ${d.attempts === 1 ? 'try' : 'tries'})`}
                        />
                      )}
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

async function recentPayments(deps: DashboardDeps, tenant: DashboardTenant) {
  const payments = await deps.readStore
    .collection<PaymentTransactionDoc>(TRANSACTIONS)
    .find({ ...tenant, type: 'incoming' }, { sort: { createdAt: -1, blockNumber: -1, logIndex: -1 }, limit: LIST });
  const networks = new Map(everyNetwork(deps.rail).map((n) => [n.network, n.name]));
  return { payments, networks };
}

async function needsAction(deps: DashboardDeps, tenant: DashboardTenant) {
  const sessions = deps.readStore.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions);
  const underpaid = await sessions.find({ ...tenant, status: 'incomplete' }, { sort: { updatedAt: -1 }, limit: LIST });
  const late = await deps.readStore
    .collection<PaymentTransactionDoc>(TRANSACTIONS)
    .find({ ...tenant, type: 'incoming', late: true, status: 'confirmed' }, { sort: { createdAt: -1 }, limit: LIST });
  const items: NeedsAction[] = underpaid.map((session) => ({ session, reason: 'underpaid', at: session.updatedAt }));
  for (const payment of late) {
    const session = await sessions.get(payment.checkoutSessionId);
    if (session) items.push({ session, reason: 'late', at: payment.createdAt });
  }
  items.sort((a, b) => b.at.localeCompare(a.at));
  return { items: items.slice(0, LIST) };
}

async function webhookFailures(deps: DashboardDeps, tenant: DashboardTenant) {
  const deliveries = await deps.readStore
    .collection<WebhookDeliveryDoc>(COLLECTIONS.webhookDeliveries)
    .find(
      { ...tenant, $or: [{ status: 'failed' }, { status: 'pending', attempts: { $gt: 0 } }] },
      { sort: { createdAt: -1 }, limit: LIST },
    );
  const endpoints = await deps.readStore
    .collection<WebhookEndpointDoc>(COLLECTIONS.webhookEndpoints)
    .find({ ...tenant, id: { $in: [...new Set(deliveries.map((d) => d.endpointId))] } });
  return { deliveries, endpoints: new Map(endpoints.map((e) => [e.id, e.url])) };
}

/** A panel as htmx asks for it (refreshed live); the whole page otherwise. */
const fragment =
  <T extends object>(
    load: (deps: DashboardDeps, tenant: DashboardTenant) => Promise<T>,
    Panel: (props: T) => JSX.Element,
  ) =>
  (deps: DashboardDeps) =>
  async (ctx: DashboardContext) => {
    if (!isHtmx(ctx)) return ctx.redirect('/dashboard');
    const props: T = await load(deps, ctx.state.tenant);
    await sendHtml(ctx, <Panel {...props} />);
  };

/**
 * Home: volume and payment count over 30 days, recent payments, sessions needing action (underpaid,
 * paid after they closed) and webhook failures, each panel refreshed live when its read model changes.
 */
export const page = definePage({
  screen: 'home',
  routes(routes, deps) {
    routes.get('/dashboard', 'read', async (ctx) => {
      const { tenant } = ctx.state;
      const [data, payments, action, webhooks] = await Promise.all([
        overview(deps, tenant),
        recentPayments(deps, tenant),
        needsAction(deps, tenant),
        webhookFailures(deps, tenant),
      ]);
      await sendHtml(
        ctx,
        <AppLayout ctx={ctx} title="Home" screen="home">
          <Live url="/dashboard/home/overview" topics={['checkout-sessions']}>
            <OverviewPanel data={data} />
          </Live>
          <Live url="/dashboard/home/recent-payments" topics={['payments']}>
            <RecentPayments {...payments} />
          </Live>
          <div class="grid grid-2">
            <Live url="/dashboard/home/needs-action" topics={['checkout-sessions', 'payments']}>
              <SessionsNeedingAction {...action} />
            </Live>
            <Live url="/dashboard/home/webhook-failures" topics={['webhooks']}>
              <WebhookFailures {...webhooks} />
            </Live>
          </div>
        </AppLayout>,
      );
    });
    routes.get(
      '/dashboard/home/overview',
      'read',
      fragment(async (d, tenant) => ({ data: await overview(d, tenant) }), OverviewPanel)(deps),
    );
    routes.get('/dashboard/home/recent-payments', 'read', fragment(recentPayments, RecentPayments)(deps));
    routes.get('/dashboard/home/needs-action', 'read', fragment(needsAction, SessionsNeedingAction)(deps));
    routes.get('/dashboard/home/webhook-failures', 'read', fragment(webhookFailures, WebhookFailures)(deps));
  },
});
