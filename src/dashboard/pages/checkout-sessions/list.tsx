import { COLLECTIONS, type CheckoutSessionDoc } from '../../../projections/collections.ts';
import {
  allSentBefore,
  type ClosedMoney,
  confirmingAfterClose,
  hasLateToSettle,
  lateMoney,
  latePaidInvoice,
} from '../../../../machines/checkout-session.late.ts';
import { withInvoicesPaidLate } from '../../invoices-paid-late.ts';
import { SESSION_STATUS_VALUES } from '../../../read-api/schema/checkout-session.ts';
import type { ReadStore } from '../../../read-store/read-store.ts';
import { UTC } from '../../../shared/time-zone.ts';
import type { DashboardTenant } from '../../context.ts';
import type { CustomerDoc } from '../../../projections/customers.projection.ts';
import { CustomerLink, customersById } from '../../ui/customer-link.tsx';
import {
  Badge,
  Card,
  DateTime,
  EmptyState,
  Field,
  liveRefresh,
  money,
  ShortId,
  TableScroll,
  type Tone,
} from '../../ui/components.tsx';
import { SelectField } from '../../ui/form-parts.tsx';
import { FilterForm, Pager, withQuery } from '../../ui/list-controls.tsx';
import { TimeZoneField } from '../../ui/time-zone-field.tsx';
import {
  PAGE_SIZE,
  PAYMENT_STATUSES,
  SESSIONS_SORT,
  type SessionsQuery,
  type SessionsQueryErrors,
  sessionsFilter,
} from './list-query.ts';

export const LIST_PATH = '/dashboard/checkout-sessions';
/** The list as CSV, with the same filters (the API's export, as the signed-in user). */
export const EXPORT_PATH = `${LIST_PATH}/export`;

export const STATUS: Record<CheckoutSessionDoc['status'], { tone: Tone; text: string }> = {
  open: { tone: 'info', text: 'Open' },
  complete: { tone: 'success', text: 'Complete' },
  incomplete: { tone: 'warning', text: 'Underpaid' },
  expired: { tone: 'neutral', text: 'Expired' },
  canceled: { tone: 'neutral', text: 'Canceled' },
};

/**
 * One page of the tenant's sessions (count and the page's documents only: never the whole list), with
 * the customers they name, read in one query for the page.
 */
export async function loadSessions(
  readStore: ReadStore,
  tenant: DashboardTenant,
  query: SessionsQuery,
  errors: SessionsQueryErrors = {},
): Promise<{ sessions: CheckoutSessionDoc[]; count: number; customers: Map<string, CustomerDoc> }> {
  const collection = readStore.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions);
  const filter = sessionsFilter(tenant, query, errors);
  const [count, found] = await Promise.all([
    collection.count(filter),
    collection.find(filter, { sort: SESSIONS_SORT, skip: (query.page - 1) * PAGE_SIZE, limit: PAGE_SIZE }),
  ]);
  // Late money that paid a session's invoice is badged as such, not as money to settle.
  const [{ sessions }, customers] = await Promise.all([
    withInvoicesPaidLate(readStore, tenant, found),
    customersById(
      readStore,
      tenant,
      found.map((s) => s.customerId),
    ),
  ]);
  return { sessions, count, customers };
}

export const paramsOf = (query: SessionsQuery): Record<string, string> => ({
  status: query.status,
  paymentStatus: query.paymentStatus,
  from: query.from,
  to: query.to,
  // The zone carries on to the pages, the live refresh and the CSV download; UTC, the default, left out.
  timezone: query.timezone === UTC ? '' : query.timezone,
  q: query.q,
});

export function SessionsFilters({ query, errors }: { query: SessionsQuery; errors: SessionsQueryErrors }): JSX.Element {
  return (
    <FilterForm path={LIST_PATH} label="Filter checkout sessions">
      <Field
        name="q"
        label="Search"
        value={query.q}
        hint="Session id, client reference or customer email"
        error={errors.q}
      />
      <SelectField
        name="status"
        label="Status"
        value={query.status}
        error={errors.status}
        options={[
          { value: '', label: 'Any status' },
          ...SESSION_STATUS_VALUES.map((s) => ({ value: s, label: STATUS[s].text })),
        ]}
      />
      <SelectField
        name="paymentStatus"
        label="Payment"
        value={query.paymentStatus}
        error={errors.paymentStatus}
        options={[
          { value: '', label: 'Paid or not' },
          ...PAYMENT_STATUSES.map((s) => ({ value: s, label: s === 'paid' ? 'Paid' : 'Unpaid' })),
        ]}
      />
      <Field name="from" label="Created from" type="date" value={query.from} error={errors.from} />
      <Field name="to" label="Created to" type="date" value={query.to} error={errors.to} />
      <TimeZoneField value={query.timezone} error={errors.timezone} />
    </FilterForm>
  );
}

/** The name and email the session collected, as one line; null when it collected neither. */
const collectedOf = (s: CheckoutSessionDoc): string | null => {
  const { name = null, email = null } = s.customerDetails ?? {};
  return name && email ? `${name} (${email})` : (name ?? email);
};

/**
 * The session's customer: the one it is linked to (`customerId`: given at creation, or an invoice's or
 * subscription's), by name or email and linked to their page; else the name and email it collected.
 */
export function SessionCustomer({
  session,
  customer,
  otherwise = '—',
}: {
  session: CheckoutSessionDoc;
  customer: CustomerDoc | undefined;
  otherwise?: string;
}): JSX.Element {
  if (session.customerId) return <CustomerLink id={session.customerId} customer={customer} />;
  return <span safe>{collectedOf(session) ?? otherwise}</span>;
}

/**
 * Whether the row says what was received beside the amount: when some arrived and it is not the amount
 * (a session paid in part, completed short, or overpaid), which its status alone does not tell.
 */
const receivedApart = (s: CheckoutSessionDoc): boolean =>
  BigInt(s.amountReceived) > 0n && s.amountReceived !== s.amountTotal;

/**
 * What the dashboard calls late money: paid late, unless all of it was sent before a cancel and only
 * confirmed after it (the payer paid in time; the session was canceled, or expired in a log from
 * before expiry waited, while it confirmed).
 */
export const lateName = (late: ClosedMoney): string =>
  allSentBefore(late) ? `Confirmed after ${late.close}` : 'Paid late';

/**
 * Money the merchant must settle, beside the status: paid after the session closed (its payment
 * status stays unpaid), or more than the total; once marked refunded, said so. A payment still
 * confirming after the session closed is said as Home lists it (late money once final), unless late
 * money to settle says more. Money after a short completion makes up no more than the total: the
 * merchant's to keep, said plainly.
 */
function MoneyBadge({ session }: { session: CheckoutSessionDoc }): JSX.Element {
  // Any confirmed late payment, whatever it comes to at the 10^8 scale, as Home counts it.
  const late = lateMoney(session);
  const paidLate = late.payments.length > 0;
  const closed = session.status !== 'complete';
  const badge =
    closed && hasLateToSettle(session)
      ? { tone: 'warning' as const, label: lateName(late) }
      : confirmingAfterClose(session).payments.length > 0
        ? { tone: 'info' as const, label: 'Confirming after it closed' }
        : closed && paidLate
          ? { tone: 'neutral' as const, label: `${lateName(late)} · refunded` }
          : closed && latePaidInvoice(session).length > 0
            ? { tone: 'neutral' as const, label: 'Paid late · paid its invoice' }
            : BigInt(session.amountOverpaid) > 0n
              ? { tone: 'warning' as const, label: 'Overpaid' }
              : paidLate
                ? { tone: 'neutral' as const, label: 'Paid after completion' }
                : null;
  if (!badge) return <></>;
  return (
    <>
      {' '}
      <Badge tone={badge.tone} label={badge.label} />
    </>
  );
}

/** The list as a card that reloads itself (same filters and page) when a session of the tenant changes. */
export function SessionsTable(props: {
  sessions: CheckoutSessionDoc[];
  count: number;
  customers: Map<string, CustomerDoc>;
  query: SessionsQuery;
}): JSX.Element {
  const params = paramsOf(props.query);
  return (
    <Card
      id="sessions"
      title="Sessions"
      actions={
        <a class="button button-quiet" href={withQuery(EXPORT_PATH, params)} download="">
          Download CSV
        </a>
      }
      aria-live="polite"
      {...liveRefresh(withQuery(LIST_PATH, { ...params, page: props.query.page }), ['checkout-sessions'])}
    >
      {props.sessions.length === 0 ? (
        <EmptyState
          message="No checkout session matches."
          hint="Sessions created with the API or by payment links and invoices show here."
        />
      ) : (
        <TableScroll label="Sessions, newest first">
          <table>
            <thead>
              <tr>
                <th class="amount">Amount</th>
                <th>Status</th>
                <th>Session</th>
                <th class="hide-narrow">Customer or reference</th>
                <th class="hide-narrow">Created</th>
              </tr>
            </thead>
            <tbody>
              {props.sessions.map((s) => (
                <tr>
                  <td class="amount">
                    <span safe>{money(s.amountTotal, s.currency)}</span>
                    {receivedApart(s) ? (
                      <div class="muted small" safe>{`${money(s.amountReceived, s.currency)} received`}</div>
                    ) : (
                      ''
                    )}
                  </td>
                  <td class="nowrap">
                    <Badge tone={STATUS[s.status].tone} label={STATUS[s.status].text} />
                    {s.paymentStatus === 'paid' && s.status !== 'complete' ? (
                      <>
                        {' '}
                        <Badge tone="success" label="Paid" />
                      </>
                    ) : (
                      ''
                    )}
                    <MoneyBadge session={s} />
                  </td>
                  <td>
                    <a href={`${LIST_PATH}/${encodeURIComponent(s.id)}`} aria-label={`Session ${s.id}`}>
                      <ShortId value={s.id} keep={8} />
                    </a>
                  </td>
                  <td class="hide-narrow">
                    {/* Else the merchant's client reference, marked as one (INV-000001 here read as a customer). */}
                    <SessionCustomer
                      session={s}
                      customer={s.customerId ? props.customers.get(s.customerId) : undefined}
                      otherwise={s.clientReferenceId ? `Ref. ${s.clientReferenceId}` : '—'}
                    />
                  </td>
                  <td class="hide-narrow nowrap">
                    <DateTime iso={s.createdAt} timeZone={props.query.timezone} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      <Pager path={LIST_PATH} params={params} page={props.query.page} pageSize={PAGE_SIZE} count={props.count} />
    </Card>
  );
}
