import { CANCELABLE_AT_PERIOD_END } from '../../../../machines/subscription.decide.ts';
import type { SubscriptionBill } from '../../../../machines/subscription.types.ts';
import type { CustomerDoc } from '../../../projections/customers.projection.ts';
import type { ReadStore } from '../../../read-store/read-store.ts';
import { PRODUCTS, type ProductDoc } from '../../../projections/catalog.projection.ts';
import { INVOICES, type InvoiceDoc } from '../../../projections/invoices.projection.ts';
import type { z } from '../../../read-api/schema/fields.ts';
import type { SubscriptionSchema } from '../../../read-api/schema/resources.ts';
import { NotFoundError } from '../../../shared/errors.ts';
import { isUuid } from '../../../shared/ids.ts';
import { apiFor, type PageApi } from '../../api.ts';
import { can } from '../../auth/roles.ts';
import type { DashboardContext, DashboardTenant } from '../../context.ts';
import { redirectTo, sendHtml } from '../../http.ts';
import { definePage } from '../../page.ts';
import {
  Alert,
  Badge,
  Card,
  CsrfField,
  DateTime,
  EmptyState,
  type FactList,
  Facts,
  Field,
  money,
  TableScroll,
  type Tone,
} from '../../ui/components.tsx';
import { Pager, StatusFilter, pageOf, statusFilterOf, withQuery } from '../../ui/list-controls.tsx';
import { TextAreaField } from '../../ui/form-parts.tsx';
import { AppLayout } from '../../ui/layout.tsx';
import { ConfirmPage } from '../developers/forms.tsx';
import { CustomerLink, customersById } from '../../ui/customer-link.tsx';
import { INVOICE_STATUSES, InvoiceStatus, InvoiceTable } from '../invoices/views.tsx';
import { everyLabel } from './cadence.ts';
import { billedPeriods } from './periods.ts';
import { SUBSCRIPTION_STATUSES } from './statuses.ts';

type SubscriptionAnswer = z.output<typeof SubscriptionSchema>;
type SubscriptionLine = SubscriptionAnswer['lineItems']['data'][number];
/** The API's subscription; each line's price carries its product (as the reference nests it). */
export type SubscriptionView = Omit<SubscriptionAnswer, 'lineItems'> & {
  lineItems: { data: (SubscriptionLine & { price: { product?: { name: string | null } | null } })[] };
};
type SubscriptionList = { page: number; limit: number; count: number; data: SubscriptionView[] };

const LIST = '/dashboard/subscriptions';
const PAGE_SIZE = 20;

const BILL_STATUSES: Record<SubscriptionBill['status'], { label: string; tone: Tone }> = {
  open: { label: 'Open', tone: 'info' },
  draft: { label: 'Not finalized', tone: 'danger' },
  paid: { label: 'Paid', tone: 'success' },
  missed: { label: 'Missed', tone: 'danger' },
  expired: { label: 'Expired', tone: 'neutral' },
  deleted: { label: 'Not billed', tone: 'neutral' },
  void: { label: 'Void', tone: 'neutral' },
};

const ENDED = new Set<SubscriptionView['status']>(['canceled', 'incomplete_expired']);

const NOTICES: Record<string, string> = {
  cancel: 'The subscription will end at the end of its period.',
  resume: 'The subscription was resumed.',
  end: 'The subscription was ended.',
};

/**
 * The subscription's status, and what keeps it from billing as it says: a scheduled end, or a latest
 * renewal Weir could not finalize (not sent: the merchant must finalize it, see its invoice).
 */
export const SubscriptionStatus = ({
  s,
}: {
  s: Pick<SubscriptionView, 'status' | 'cancelAtPeriodEnd' | 'latestInvoice'>;
}): JSX.Element => (
  <>
    <Badge tone={SUBSCRIPTION_STATUSES[s.status].tone} label={SUBSCRIPTION_STATUSES[s.status].label} />
    {s.latestInvoice?.status === 'draft' && !ENDED.has(s.status) ? (
      <>
        {' '}
        <Badge tone="danger" label="Bill not finalized" />
      </>
    ) : (
      ''
    )}
    {s.cancelAtPeriodEnd && !ENDED.has(s.status) ? (
      <>
        {' '}
        <Badge tone="warning" label="Ends at period end" />
      </>
    ) : (
      ''
    )}
  </>
);

/** The subscription's customer, linked to their page (a deleted one keeps its record); none for an old one without. */
const SubscriptionCustomer = ({ s, customers }: { s: SubscriptionView; customers: Map<string, CustomerDoc> }) =>
  s.customerId ? (
    <CustomerLink id={s.customerId} customer={customers.get(s.customerId)} />
  ) : (
    <span class="muted">None</span>
  );

/** The customers of `list`, by id, read in one query from the tenant's customers. */
const customersOf = (deps: { readStore: ReadStore }, ctx: DashboardContext, list: SubscriptionView[]) =>
  customersById(
    deps.readStore,
    ctx.state.tenant,
    list.map((s) => s.customerId),
  );

/** What the merchant sold: its items' product names, as Stripe shows a subscription ("Plan" only for a line with none). */
export const planOf = (s: SubscriptionView): string =>
  s.lineItems.data.map((l) => l.price.product?.name ?? 'Plan').join(', ') || 'Plan';

/**
 * `list` with every line's product named: one recorded before names were kept (the API's null name)
 * takes its product's name from the tenant's catalog, read in one query, so it reads as what was
 * sold rather than "Plan".
 */
export async function withProductNames(
  deps: { readStore: ReadStore },
  tenant: DashboardTenant,
  list: SubscriptionView[],
): Promise<SubscriptionView[]> {
  type Line = SubscriptionView['lineItems']['data'][number];
  const unnamed = (l: Line): boolean => !l.price.product?.name;
  const wanted = [
    ...new Set(list.flatMap((s) => s.lineItems.data.filter(unnamed).map((l) => l.price.productId)).filter(Boolean)),
  ];
  if (wanted.length === 0) return list;
  const found = await deps.readStore
    .collection<ProductDoc>(PRODUCTS)
    .find({ organizationId: tenant.organizationId, environment: tenant.environment, id: { $in: wanted } });
  const names = new Map(found.map((p) => [p.id, p.name]));
  const named = (l: Line): Line => {
    const name = l.price.product?.name ?? names.get(l.price.productId);
    return name ? { ...l, price: { ...l.price, product: { id: l.price.productId, name } } } : l;
  };
  return list.map((s) => ({ ...s, lineItems: { ...s.lineItems, data: s.lineItems.data.map(named) } }));
}

function ListPage(props: {
  ctx: DashboardContext;
  list: SubscriptionList;
  status: string;
  statusError: string | null;
  customers: Map<string, CustomerDoc>;
}): JSX.Element {
  const { ctx, list, status, customers } = props;
  return (
    <AppLayout ctx={ctx} title="Subscriptions" screen="subscriptions">
      <Card id="subscriptions">
        <StatusFilter
          path={LIST}
          label="Subscription status"
          current={status}
          statuses={Object.entries(SUBSCRIPTION_STATUSES).map(([value, s]) => ({ value, label: s.label }))}
          error={props.statusError}
        />
        {list.data.length === 0 ? (
          <EmptyState
            message={status ? 'No subscriptions with this status.' : 'No subscriptions yet.'}
            hint="Subscription checkouts and recurring invoices start subscriptions."
          />
        ) : (
          <TableScroll label="Subscriptions, each with its status and amount">
            <table>
              <thead>
                <tr>
                  <th>Plan</th>
                  <th class="hide-narrow">Customer</th>
                  <th>Status</th>
                  <th class="amount">Amount</th>
                  <th class="hide-narrow">Current period ends</th>
                </tr>
              </thead>
              <tbody>
                {list.data.map((s) => (
                  <tr>
                    <td>
                      <a href={`${LIST}/${s.id}`} safe>
                        {planOf(s)}
                      </a>
                    </td>
                    <td class="hide-narrow">
                      <SubscriptionCustomer s={s} customers={customers} />
                    </td>
                    <td class="nowrap">
                      <SubscriptionStatus s={s} />
                    </td>
                    <td class="amount" safe>
                      {`${money(s.amountTotal, s.currency)} ${everyLabel(s)}`}
                    </td>
                    <td class="hide-narrow nowrap">
                      <DateTime iso={s.currentPeriodEnd} timeZone={ctx.state.timeZone} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
        )}
        <Pager
          path={LIST}
          params={status ? { status } : {}}
          page={list.page}
          pageSize={list.limit}
          count={list.count}
        />
      </Card>
    </AppLayout>
  );
}

/**
 * Cancel at period end (offered where the API takes it) with its optional reason; resume is its own
 * form; end now is a link to a page that asks first, so Enter in the reason never ends a subscription.
 */
export function Actions({
  ctx,
  s,
  comment,
}: {
  ctx: DashboardContext;
  s: SubscriptionView;
  comment?: { value: string; error: string | null } | undefined;
}): JSX.Element {
  if (ENDED.has(s.status)) return <p class="muted">The subscription has ended: nothing more can change.</p>;
  const resumable = s.cancelAtPeriodEnd || s.status === 'paused';
  // Offered only where the API takes it: not paused (resume it or end it), nor incomplete (end it).
  const cancelable = !s.cancelAtPeriodEnd && CANCELABLE_AT_PERIOD_END.has(s.status);
  return (
    <>
      {resumable ? (
        <form method="post" action={`${LIST}/${s.id}/resume`} class="inline-form">
          <CsrfField token={ctx.state.csrfToken} />
          <button type="submit" class="button-primary">
            Resume
          </button>
        </form>
      ) : (
        ''
      )}
      <div class="cancel-form">
        {cancelable ? (
          <form method="post" action={`${LIST}/${s.id}/cancel`} id="cancel-at-period-end">
            <CsrfField token={ctx.state.csrfToken} />
            <Field
              name="comment"
              label="Reason (optional)"
              maxlength={500}
              value={comment?.value}
              error={comment?.error}
            />
          </form>
        ) : (
          ''
        )}
        <div class="action-bar">
          {cancelable ? (
            <button type="submit" class="button-secondary" form="cancel-at-period-end">
              Cancel at period end
            </button>
          ) : (
            ''
          )}
          <a class="button-danger" href={`${LIST}/${s.id}/end`}>
            End now
          </a>
        </div>
      </div>
    </>
  );
}

/** Asks before ending a subscription at once (it cannot be undone), with the reason it records. */
function EndPage(props: {
  ctx: DashboardContext;
  s: SubscriptionView;
  comment?: { value: string; error: string | null } | undefined;
}): JSX.Element {
  const { s } = props;
  return (
    <ConfirmPage
      ctx={props.ctx}
      screen="subscriptions"
      title="End subscription"
      message={`End “${planOf(s)}” now? It stops billing at once; this cannot be undone.`}
      action={`${LIST}/${s.id}/end`}
      button="End subscription"
      back={`${LIST}/${s.id}`}
      backLabel="Keep it"
    >
      {/* A text area: Enter in it starts a new line, it never submits. */}
      <TextAreaField
        name="comment"
        label="Reason (optional)"
        value={props.comment?.value}
        error={props.comment?.error}
      />
    </ConfirmPage>
  );
}

function DetailPage(props: {
  ctx: DashboardContext;
  s: SubscriptionView;
  periods: SubscriptionBill[];
  invoices: InvoiceDoc[];
  customers: Map<string, CustomerDoc>;
  notice: string | null;
  error: string | null;
  /** The reason as typed and what was wrong with it, when the API refused it. */
  comment?: { value: string; error: string | null };
}): JSX.Element {
  const { ctx, s } = props;
  const { cancelAt, endedAt } = s;
  const invoices = new Map(props.invoices.map((i) => [i.id, i]));
  const facts: FactList = [
    ['Customer', () => <SubscriptionCustomer s={s} customers={props.customers} />],
    ['Amount', `${money(s.amountTotal, s.currency)} ${everyLabel(s)}`],
    ['Started', () => <DateTime iso={s.startDate} timeZone={ctx.state.timeZone} />],
    [
      'Current period',
      () => <PeriodSpan start={s.currentPeriodStart} end={s.currentPeriodEnd} timeZone={ctx.state.timeZone} />,
    ],
    cancelAt && !endedAt ? ['Ends', () => <DateTime iso={cancelAt} timeZone={ctx.state.timeZone} />] : null,
    endedAt ? ['Ended', () => <DateTime iso={endedAt} timeZone={ctx.state.timeZone} />] : null,
    s.cancellationComment ? ['Reason', s.cancellationComment] : null,
    ['Open bills', () => <OpenBills invoices={props.invoices} currency={s.currency} />],
  ];
  return (
    <AppLayout ctx={ctx} title={planOf(s)} screen="subscriptions" actions={<SubscriptionStatus s={s} />}>
      <p class="back-link">
        <a href={LIST}>← All subscriptions</a>
      </p>
      {props.notice ? (
        <Alert tone="success">
          <span safe>{props.notice}</span>
        </Alert>
      ) : (
        ''
      )}
      {props.error ? (
        <Alert tone="danger">
          <span safe>{props.error}</span>
        </Alert>
      ) : (
        ''
      )}
      <MoneyToRefund s={s} />
      <div class="grid grid-2">
        <Card title="Summary" id="subscription-summary">
          <Facts items={facts} />
        </Card>
        {can(ctx.state.user.role, 'manage') ? (
          <Card title="Actions" id="subscription-actions">
            <Actions ctx={ctx} s={s} comment={props.comment} />
          </Card>
        ) : (
          ''
        )}
      </div>
      <Card title="Periods" id="subscription-periods">
        {props.periods.length === 0 ? (
          <EmptyState message="No period billed yet." />
        ) : (
          <TableScroll label="Billed periods, each with its status">
            <table>
              <thead>
                <tr>
                  <th>Period</th>
                  <th class="hide-narrow">Billed by</th>
                  <th>Status</th>
                  <th class="amount">Amount</th>
                </tr>
              </thead>
              <tbody>
                {props.periods.map((bill) => (
                  <tr>
                    <td>
                      <PeriodSpan start={bill.periodStart} end={bill.periodEnd} timeZone={ctx.state.timeZone} />
                    </td>
                    <td class="hide-narrow">
                      {bill.kind === 'invoice' ? (
                        <a href={`/dashboard/invoices/${bill.id}`}>Invoice</a>
                      ) : (
                        <a href={`/dashboard/checkout-sessions/${bill.id}`}>Checkout session</a>
                      )}
                    </td>
                    <td>
                      <BillStatus bill={bill} invoice={invoices.get(bill.id)} />
                    </td>
                    <td class="amount">
                      <span safe>{money(bill.amountDue, s.currency)}</span>
                      {bill.amountDiscount ? (
                        <FirstPaymentDiscount amount={money(bill.amountDiscount, s.currency)} />
                      ) : (
                        ''
                      )}
                      {bill.amountToRefund ? (
                        <>
                          <br />
                          <span class="muted" safe>{`${money(bill.amountToRefund, s.currency)} to refund`}</span>
                        </>
                      ) : (
                        ''
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
        )}
      </Card>
      <Card title="Invoices" id="subscription-invoices">
        {props.invoices.length === 0 ? (
          <EmptyState message="No invoices yet." hint="Each renewal is billed by an invoice." />
        ) : (
          <InvoiceTable invoices={props.invoices} timeZone={ctx.state.timeZone} />
        )}
      </Card>
    </AppLayout>
  );
}

/**
 * A period's status. The subscription's record keeps a bill open after its end: the invoice says it
 * was voided (or is uncollectible). A renewal Weir could not finalize is a draft not sent, waiting for
 * the merchant to finalize it: the record says so (`draft`), and so does the invoice for one recorded
 * before the subscription learnt it.
 */
export function BillStatus({ bill, invoice }: { bill: SubscriptionBill; invoice?: InvoiceDoc }): JSX.Element {
  // Paid after the subscription stopped following it (ended): the invoice says so.
  if (invoice && (invoice.status === 'void' || invoice.status === 'uncollectible' || invoice.status === 'paid'))
    return <InvoiceStatus status={invoice.status} />;
  if (invoice?.status === 'draft' && invoice.lastFinalizationError)
    return <Badge tone="danger" label="Not finalized" />;
  return <Badge tone={BILL_STATUSES[bill.status].tone} label={BILL_STATUSES[bill.status].label} />;
}

/**
 * Every bill the subscription still has open, from the invoices read model: a renewal is issued at
 * each period end while an earlier one is open within its terms, so the latest bill is not all it owes.
 */
export function OpenBills({ invoices, currency }: { invoices: InvoiceDoc[]; currency: string }): JSX.Element {
  const open = invoices.filter((i) => i.status === 'open');
  if (open.length === 0) return <span class="muted">None</span>;
  return (
    <span>
      {open.map((i, n) => (
        <>
          {n > 0 ? <br /> : ''}
          <a href={`/dashboard/invoices/${i.id}`} safe>
            {i.number}
          </a>{' '}
          <span safe>{`${money(i.amountRemaining, currency)} due`}</span>
        </>
      ))}
    </span>
  );
}

/**
 * Money the first checkout session of a subscription that ended without starting kept (a part by its due
 * time, or money sent after the end): it started nothing and is the merchant's to refund, said plainly.
 */
export function MoneyToRefund({ s }: { s: Pick<SubscriptionView, 'status' | 'currency' | 'latestInvoice'> }) {
  const bill = s.latestInvoice;
  if (!bill?.amountToRefund || !bill.checkoutSessionId || !ENDED.has(s.status)) return '';
  return (
    <Alert tone="danger">
      <span
        safe
      >{`${money(bill.amountToRefund, s.currency)} reached the first payment of this subscription, which ended without starting: it did not start it. Refund it to the payer: see `}</span>
      <a href={`/dashboard/checkout-sessions/${bill.checkoutSessionId}`}>its checkout session</a>.
    </Alert>
  );
}

/** A promotion code takes its coupon off the first payment only: said where it did, so it does not read as recurring. */
const FirstPaymentDiscount = ({ amount }: { amount: string }): JSX.Element => (
  <>
    <br />
    <span class="muted" safe>{`−${amount} promotion code, first payment only`}</span>
  </>
);

const PeriodSpan = ({ start, end, timeZone }: { start: string; end: string; timeZone: string }): JSX.Element => (
  <span class="period">
    <DateTime iso={start} timeZone={timeZone} /> – <DateTime iso={end} timeZone={timeZone} />
  </span>
);

async function loadSubscription(api: PageApi, id: string): Promise<SubscriptionView> {
  const answer = isUuid(id) ? await api<SubscriptionView>('GET', `/api/v1/subscriptions/${id}`) : null;
  if (!answer || answer.status !== 200) throw new NotFoundError('subscription', id);
  return answer.body;
}

/**
 * Subscriptions: the list (by status), a subscription with every period it billed and its
 * invoices, and cancel at period end, resume and end now through the API's own routes.
 */
export const page = definePage({
  screen: 'subscriptions',
  routes(routes, deps) {
    const showDetail = async (
      ctx: DashboardContext,
      s: SubscriptionView,
      error: string | null,
      status = 200,
      comment?: { value: string; error: string | null },
    ) => {
      const done = typeof ctx.query.done === 'string' ? ctx.query.done : '';
      const [periods, invoices, customers, [named]] = await Promise.all([
        billedPeriods(deps.eventStore, s.id),
        deps.readStore
          .collection<InvoiceDoc>(INVOICES)
          .find({ ...ctx.state.tenant, subscriptionId: s.id, deletedAt: null }, { sort: { createdAt: -1 } }),
        customersOf(deps, ctx, [s]),
        withProductNames(deps, ctx.state.tenant, [s]),
      ]);
      await sendHtml(
        ctx,
        <DetailPage
          ctx={ctx}
          s={named ?? s}
          periods={periods}
          invoices={invoices.filter((i) => i.status in INVOICE_STATUSES)}
          customers={customers}
          notice={error ? null : (NOTICES[done] ?? null)}
          error={error}
          comment={comment}
        />,
        status,
      );
    };

    routes.get(LIST, 'read', async (ctx) => {
      const { status, error } = statusFilterOf(ctx.query, SUBSCRIPTION_STATUSES, 'subscriptions');
      const answer = await apiFor(ctx, deps)<SubscriptionList>(
        'GET',
        withQuery('/api/v1/subscriptions', { status, page: pageOf(ctx.query.page), limit: PAGE_SIZE }),
      );
      const answered = answer.status === 200 ? answer.body : { page: 1, limit: PAGE_SIZE, count: 0, data: [] };
      const [customers, data] = await Promise.all([
        customersOf(deps, ctx, answered.data),
        withProductNames(deps, ctx.state.tenant, answered.data),
      ]);
      const list = { ...answered, data };
      await sendHtml(
        ctx,
        <ListPage ctx={ctx} list={list} status={status} statusError={error} customers={customers} />,
        error ? 400 : 200,
      );
    });

    routes.get(`${LIST}/:id`, 'read', async (ctx) => {
      await showDetail(ctx, await loadSubscription(apiFor(ctx, deps), ctx.params.id!), null);
    });

    routes.get(`${LIST}/:id/end`, 'manage', async (ctx) => {
      const s = await loadSubscription(apiFor(ctx, deps), ctx.params.id!);
      if (ENDED.has(s.status)) return redirectTo(ctx, `${LIST}/${s.id}`);
      await sendHtml(ctx, <EndPage ctx={ctx} s={s} />);
    });

    for (const action of ['cancel', 'resume', 'end'] as const)
      routes.post(`${LIST}/:id/${action}`, 'manage', async (ctx) => {
        const api = apiFor(ctx, deps);
        const s = await loadSubscription(api, ctx.params.id!);
        const comment = ctx.state.form.get('comment')?.trim();
        const answer = await api<{ message?: string }>(
          'POST',
          `/api/v1/subscriptions/${s.id}/${action}`,
          action !== 'resume' && comment ? { cancellationComment: comment } : undefined,
        );
        if (answer.status !== 200) {
          const message = answer.body?.message ?? 'the request was refused';
          // A refused reason is named at its field and kept as typed.
          const atComment = /cancellationComment/.test(message);
          const kept = {
            value: comment ?? '',
            error: atComment ? message.replace('cancellationComment', 'the reason') : null,
          };
          if (action === 'end' && atComment)
            return sendHtml(ctx, <EndPage ctx={ctx} s={s} comment={kept} />, answer.status);
          return showDetail(
            ctx,
            await loadSubscription(api, s.id),
            atComment ? null : message,
            answer.status >= 500 ? 502 : answer.status,
            kept,
          );
        }
        redirectTo(ctx, `${LIST}/${s.id}?done=${action}`);
      });
  },
});
