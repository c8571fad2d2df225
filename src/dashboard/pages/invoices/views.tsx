import type { z } from '../../../read-api/schema/fields.ts';
import type { InvoiceSchema } from '../../../read-api/schema/invoice.ts';
import type { DashboardContext } from '../../context.ts';
import {
  Alert,
  Badge,
  Card,
  CsrfField,
  DateTime,
  EmptyState,
  Facts,
  money,
  ShortId,
  TableScroll,
  type Tone,
} from '../../ui/components.tsx';
import { Pager, StatusFilter } from '../../ui/list-controls.tsx';
import { AppLayout } from '../../ui/layout.tsx';
import { WALLET_INVALID } from '../../../actors/session-networks.ts';
import { SECTIONS } from '../settings/frame.tsx';
import { INTERVALS, inSettings } from './invoice-form.ts';
import { invoiceTotals, lineAmount } from '../../../hosted/totals.ts';
import { hasReceivedPayment } from '../../../../machines/invoice.decide.ts';

export type InvoiceView = z.output<typeof InvoiceSchema>;
export type InvoiceList = { page: number; limit: number; count: number; data: InvoiceView[] };

export const INVOICE_STATUSES: Record<InvoiceView['status'], { label: string; tone: Tone }> = {
  draft: { label: 'Draft', tone: 'neutral' },
  open: { label: 'Open', tone: 'info' },
  paid: { label: 'Paid', tone: 'success' },
  void: { label: 'Void', tone: 'neutral' },
  uncollectible: { label: 'Uncollectible', tone: 'danger' },
};

export const InvoiceStatus = ({ status }: { status: InvoiceView['status'] }): JSX.Element => (
  <Badge tone={INVOICE_STATUSES[status].tone} label={INVOICE_STATUSES[status].label} />
);

/** A note as typed, its line breaks kept. */
const prewrap = (text: string) => () => (
  <span class="prewrap" safe>
    {text}
  </span>
);

const customerLabel = (invoice: InvoiceView): string =>
  invoice.customer?.name ?? invoice.customer?.email ?? invoice.customerId;

/** Still owed, with part of it paid on chain (or the rest of an uncollectible one). */
const isPartlyPaid = (invoice: Pick<InvoiceView, 'status' | 'amountPaid'>): boolean =>
  (invoice.status === 'open' || invoice.status === 'uncollectible') && BigInt(invoice.amountPaid) > 0n;

/** Money arrived that is not the amount: paid in part while owed, or a payment completed short (or over) and settled so. */
const paidApart = (invoice: Pick<InvoiceView, 'amountDue' | 'amountPaid'>): boolean =>
  BigInt(invoice.amountPaid) > 0n && invoice.amountPaid !== invoice.amountDue;

/** What a row of invoices shows: the API's invoice, or the read model's (which has no customer). */
type InvoiceRow = Pick<InvoiceView, 'id' | 'number' | 'status' | 'amountDue' | 'amountPaid' | 'currency' | 'dueDate'> &
  Partial<Pick<InvoiceView, 'customer' | 'customerId'>>;

/** Invoices as rows linking to each: number, customer (when `customers`), status, amount and due date. */
export function InvoiceTable({
  invoices,
  customers,
  timeZone,
}: {
  invoices: InvoiceRow[];
  customers?: boolean;
  /** The dashboard's zone, the due dates shown in it. */
  timeZone: string;
}): JSX.Element {
  return (
    <TableScroll label="Invoices, each with its status and amount">
      <table>
        <thead>
          <tr>
            <th>Number</th>
            {customers ? <th class="hide-narrow">Customer</th> : ''}
            <th>Status</th>
            <th class="amount">Amount</th>
            <th class="hide-narrow">Due</th>
          </tr>
        </thead>
        <tbody>
          {invoices.map((invoice) => (
            <tr>
              <td class="nowrap">
                <a href={`/dashboard/invoices/${invoice.id}`} safe>
                  {invoice.number}
                </a>
              </td>
              {customers ? (
                <td class="truncate hide-narrow" safe>
                  {invoice.customer?.name ?? invoice.customer?.email ?? invoice.customerId ?? ''}
                </td>
              ) : (
                ''
              )}
              <td>
                <InvoiceStatus status={invoice.status} />
              </td>
              <td class="amount">
                <span safe>{money(invoice.amountDue, invoice.currency)}</span>
                {paidApart(invoice) ? (
                  <div class="muted small" safe>{`${money(invoice.amountPaid, invoice.currency)} paid`}</div>
                ) : (
                  ''
                )}
              </td>
              <td class="hide-narrow nowrap">
                <DateTime iso={invoice.dueDate} timeZone={timeZone} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}

export function InvoiceListPage(props: {
  ctx: DashboardContext;
  list: InvoiceList;
  status: string;
  /** A `?status=` that names no invoice status (see statusFilterOf): said above the filter. */
  statusError: string | null;
  canManage: boolean;
  notice: string | null;
}): JSX.Element {
  const { ctx, list, status } = props;
  return (
    <AppLayout
      ctx={ctx}
      title="Invoices"
      screen="invoices"
      actions={
        props.canManage ? (
          <a class="button-primary" href="/dashboard/invoices/new">
            New invoice
          </a>
        ) : (
          ''
        )
      }
    >
      {props.notice ? (
        <Alert tone="success">
          <span safe>{props.notice}</span>
        </Alert>
      ) : (
        ''
      )}
      <Card id="invoices">
        <StatusFilter
          path="/dashboard/invoices"
          label="Invoice status"
          current={status}
          statuses={Object.entries(INVOICE_STATUSES).map(([value, s]) => ({ value, label: s.label }))}
          error={props.statusError}
        />
        {list.data.length === 0 ? (
          <EmptyState
            message={
              status
                ? `No ${INVOICE_STATUSES[status as InvoiceView['status']].label.toLowerCase()} invoices.`
                : 'No invoices yet.'
            }
            hint="Invoices you create here or over the API show here."
          />
        ) : (
          <InvoiceTable invoices={list.data} customers timeZone={ctx.state.timeZone} />
        )}
        <Pager
          path="/dashboard/invoices"
          params={status ? { status } : {}}
          page={list.page}
          pageSize={list.limit}
          count={list.count}
        />
      </Card>
    </AppLayout>
  );
}

/** One action of the detail page: a POST form of one button. */
function ActionButton(props: {
  ctx: DashboardContext;
  invoice: InvoiceView;
  action: string;
  label: string;
  tone?: 'primary' | 'secondary' | 'danger';
}): JSX.Element {
  return (
    <form method="post" action={`/dashboard/invoices/${props.invoice.id}/${props.action}`} class="inline-form">
      <CsrfField token={props.ctx.state.csrfToken} />
      <button type="submit" class={`button-${props.tone ?? 'secondary'}`} safe>
        {props.label}
      </button>
    </form>
  );
}

/** The actions the invoice's status allows (the API refuses the others anyway). */
export function InvoiceActions({ ctx, invoice }: { ctx: DashboardContext; invoice: InvoiceView }): JSX.Element {
  const s = invoice.status;
  const button = (action: string, label: string, tone?: 'primary' | 'secondary' | 'danger') => (
    <ActionButton ctx={ctx} invoice={invoice} action={action} label={label} tone={tone} />
  );
  // Money has arrived for it (a partial payment, or part of its session's network fee): the API
  // refuses its void, so it is not offered.
  const partlyPaid = (s === 'open' || s === 'uncollectible') && hasReceivedPayment(invoice);
  return (
    <>
      <div class="action-bar">
        {s === 'draft' ? (
          <>
            <a class="button-secondary" href={`/dashboard/invoices/${invoice.id}/edit`}>
              Edit
            </a>
            {button('finalize', 'Finalize', 'primary')}
          </>
        ) : (
          ''
        )}
        {s === 'open' || s === 'uncollectible' ? button('pay', 'Mark paid') : ''}
        {s === 'open' ? button('mark-uncollectible', 'Mark uncollectible') : ''}
        {button('duplicate', 'Duplicate')}
        {(s === 'open' || s === 'uncollectible') && !partlyPaid ? button('void', 'Void', 'danger') : ''}
        {s === 'draft' ? button('delete', 'Delete draft', 'danger') : ''}
      </div>
      {partlyPaid ? (
        <p class="hint" id="void-refused" safe>
          {`${BigInt(invoice.amountPaid) > 0n ? `${money(invoice.amountPaid, invoice.currency)} of it has been paid` : 'A payment reached it (no more than the network fee its checkout charged on top)'}, so it cannot be voided: mark it paid or uncollectible instead.`}
        </p>
      ) : (
        ''
      )}
    </>
  );
}

/** Mail the invoice (a draft is finalized first): to the customer's address unless another is typed. */
function SendForm({ ctx, invoice, error }: { ctx: DashboardContext; invoice: InvoiceView; error: string | null }) {
  return (
    <form method="post" action={`/dashboard/invoices/${invoice.id}/send`} class="send-form" novalidate>
      <CsrfField token={ctx.state.csrfToken} />
      <div class={['field', error ? 'has-error' : '']}>
        <label for="field-to">Send to</label>
        <div class="input-with-button">
          <input
            id="field-to"
            name="to"
            type="email"
            placeholder={invoice.customer?.email ?? 'payer@example.com'}
            aria-describedby={error ? 'field-to-error field-to-hint' : 'field-to-hint'}
            aria-invalid={error ? 'true' : undefined}
          />
          <button type="submit" class="button-primary">
            {invoice.sentAt ? 'Send again' : 'Send'}
          </button>
        </div>
        <p class="hint" id="field-to-hint">
          {invoice.status === 'draft'
            ? "Finalizes the draft, then mails it with its pay link. Blank: the customer's address."
            : "Mails it with its pay link. Blank: the customer's address."}
        </p>
        {error ? (
          <p class="error" id="field-to-error" safe>
            {error}
          </p>
        ) : (
          ''
        )}
      </div>
    </form>
  );
}

/**
 * Why Weir could not finalize this draft itself (a renewal): it waits for the merchant, who fixes
 * the organization or the draft and finalizes it here.
 */
export function FinalizationFailure(props: {
  ctx: DashboardContext;
  invoice: InvoiceView;
  error: NonNullable<InvoiceView['lastFinalizationError']>;
}): JSX.Element {
  const what = props.invoice.subscriptionId ? 'this renewal of its subscription' : 'this draft';
  return (
    <Alert tone="danger">
      <p id="finalization-error">
        <strong safe>{`Weir could not finalize ${what}, so it was not sent to the customer`}</strong>
        {' ('}
        <DateTime iso={props.error.at} timeZone={props.ctx.state.timeZone} />
        {'): '}
        <span safe>{inSettings(props.error.message)}</span>
      </p>
      <p>
        {props.error.code === WALLET_INVALID ? (
          <>
            Fix it (correct the wallet address under{' '}
            <a href={SECTIONS.paymentMethods.path}>Settings → Payment methods</a>: the message says what is wrong with
            it), then finalize it: a renewal is then mailed to its customer.
          </>
        ) : (
          <>
            Fix it (add the wallet address back under{' '}
            <a href={SECTIONS.paymentMethods.path}>Settings → Payment methods</a>, or edit the draft), then finalize it:
            a renewal is then mailed to its customer.
          </>
        )}
      </p>
    </Alert>
  );
}

const sessionLink = (id: string): JSX.Element => (
  <a href={`/dashboard/checkout-sessions/${encodeURIComponent(id)}`} aria-label={`Checkout session ${id}`}>
    <ShortId value={id} keep={8} />
  </a>
);

/**
 * An invoice that received more than its amount (two of its sessions paid, one partly before the
 * other completed, or one after the invoice was paid): by how much, through which sessions, and that
 * the merchant refunds it, since the money went straight to their wallet. Nothing when it was not overpaid.
 */
export function Overpayment({
  invoice,
}: {
  invoice: Pick<InvoiceView, 'amountDue' | 'amountPaid' | 'amountOverpaid' | 'currency' | 'paymentAttempts'>;
}): JSX.Element {
  if (BigInt(invoice.amountOverpaid) <= 0n) return <></>;
  const over = money(invoice.amountOverpaid, invoice.currency);
  const refund = `Weir holds no funds: all of it went to your wallet. Refund the payer ${over} from your wallet yourself.`;
  const sessions = invoice.paymentAttempts.filter((a) => BigInt(a.amountReceived) > 0n).map((a) => a.checkoutSessionId);
  const through =
    sessions.length > 1 ? (
      <>
        {' through '}
        {sessions.length} checkout sessions that each received money for it (
        {sessions.map((id, i) => (
          <>
            {i === 0 ? '' : i === sessions.length - 1 ? ' and ' : ', '}
            {sessionLink(id)}
          </>
        ))}
        )
      </>
    ) : sessions.length === 1 ? (
      <>
        {' through checkout session '}
        {sessionLink(sessions[0]!)}
      </>
    ) : (
      ''
    );
  return (
    <Alert tone="danger">
      <p id="invoice-overpaid">
        <strong safe>{`This invoice was overpaid by ${over}`}</strong>
        {': it received '}
        <span safe>{money(invoice.amountPaid, invoice.currency)}</span>
        {' for its '}
        <span safe>{money(invoice.amountDue, invoice.currency)}</span>
        {through}.
      </p>
      <p safe>{refund}</p>
    </Alert>
  );
}

const intervalLabel = (invoice: InvoiceView): string =>
  invoice.recurring
    ? (INTERVALS.find(
        (i) => i.value === { 1: 'month', 3: 'quarter', 6: 'half-year', 12: 'year' }[invoice.recurring!.intervalCount],
      )?.label ?? 'Repeats')
    : 'Does not repeat';

export function InvoiceDetailPage(props: {
  ctx: DashboardContext;
  invoice: InvoiceView;
  canManage: boolean;
  pdfUrl: string;
  networks: Map<number, string>;
  notice: string | null;
  error: { message: string; field: 'to' | null } | null;
}): JSX.Element {
  const { ctx, invoice, networks } = props;
  const dates: [string, string | null][] = [
    ['Created', invoice.createdAt],
    ['Due', invoice.dueDate],
    ['Finalized', invoice.finalizedAt],
    ['Sent', invoice.sentAt],
    ['Paid', invoice.paidAt],
    ['Voided', invoice.voidedAt],
    ['Marked uncollectible', invoice.markedUncollectibleAt],
  ];
  const chains = invoice.paymentMethods.chainIds;
  return (
    <AppLayout
      ctx={ctx}
      title={`Invoice ${invoice.number}`}
      screen="invoices"
      actions={<InvoiceStatus status={invoice.status} />}
    >
      <p class="back-link">
        <a href="/dashboard/invoices">← All invoices</a>
      </p>
      {props.notice ? (
        <Alert tone="success">
          <span safe>{props.notice}</span>
        </Alert>
      ) : (
        ''
      )}
      {invoice.status === 'draft' && invoice.lastFinalizationError ? (
        <FinalizationFailure invoice={invoice} error={invoice.lastFinalizationError} ctx={ctx} />
      ) : (
        ''
      )}
      <Overpayment invoice={invoice} />
      {props.error && props.error.field === null ? (
        <Alert tone="danger">
          <span safe>{props.error.message}</span>
        </Alert>
      ) : (
        ''
      )}
      {props.canManage ? (
        <Card title="Actions" id="invoice-actions">
          <InvoiceActions ctx={ctx} invoice={invoice} />
          {invoice.status === 'draft' || invoice.status === 'open' ? (
            <SendForm ctx={ctx} invoice={invoice} error={props.error?.field === 'to' ? props.error.message : null} />
          ) : (
            ''
          )}
        </Card>
      ) : (
        ''
      )}
      <div class="grid grid-2">
        <Card title="Summary" id="invoice-summary">
          <Facts
            items={[
              [
                'Customer',
                () => (
                  <>
                    <span safe>{customerLabel(invoice)}</span>
                    {invoice.customer?.name && invoice.customer.email ? (
                      <span class="muted" safe>
                        {` · ${invoice.customer.email}`}
                      </span>
                    ) : (
                      ''
                    )}
                  </>
                ),
              ],
              ['Amount due', money(invoice.amountDue, invoice.currency)],
              ['Paid', money(invoice.amountPaid, invoice.currency)],
              // Some paid: what is left to pay says more than the amount due.
              isPartlyPaid(invoice) ? ['Remaining', money(invoice.amountRemaining, invoice.currency)] : null,
              BigInt(invoice.amountOverpaid) > 0n
                ? ['Overpaid', money(invoice.amountOverpaid, invoice.currency)]
                : null,
              // Where its payment is followed, and a part payment completed.
              invoice.checkoutSessionId ? ['Checkout session', () => sessionLink(invoice.checkoutSessionId!)] : null,
              ['Repeats', intervalLabel(invoice)],
              [
                'Networks',
                chains.length === 0
                  ? 'Every network you accept'
                  : chains.map((c) => networks.get(c) ?? `Chain ${c}`).join(', '),
              ],
              invoice.subscriptionId
                ? [
                    'Subscription',
                    () => <a href={`/dashboard/subscriptions/${invoice.subscriptionId}`}>View subscription</a>,
                  ]
                : null,
            ]}
          />
        </Card>
        <Card title="Dates and document" id="invoice-dates">
          <Facts
            items={dates.map(
              ([label, iso]) => iso !== null && [label, () => <DateTime iso={iso} timeZone={ctx.state.timeZone} />],
            )}
          />
          {invoice.url ? (
            <p class="document-links">
              <a class="button-secondary" href={invoice.url} target="_blank" rel="noopener">
                Invoice page
              </a>
              <a class="button-secondary" href={props.pdfUrl}>
                Download PDF
              </a>
            </p>
          ) : (
            <p class="muted">The invoice page and its PDF exist once the draft is finalized.</p>
          )}
        </Card>
      </div>
      <InvoiceLines invoice={invoice} />
      {invoice.memo || invoice.footer ? (
        <Card title="Notes" id="invoice-notes">
          <Facts
            items={[
              invoice.memo ? ['Memo', prewrap(invoice.memo)] : null,
              invoice.footer ? ['Footer', prewrap(invoice.footer)] : null,
            ]}
          />
        </Card>
      ) : (
        ''
      )}
    </AppLayout>
  );
}

/**
 * The invoice's lines at price × quantity, then its totals as its page and PDF show them (subtotal,
 * one row per tax rate, total): lines with their tax in them and a tax row below counted it twice.
 */
export function InvoiceLines({ invoice }: { invoice: InvoiceView }): JSX.Element {
  return (
    <Card title="Lines" id="invoice-lines">
      <TableScroll label="The invoice's lines">
        <table class="lines-table">
          <thead>
            <tr>
              <th>Description</th>
              <th class="amount hide-narrow">Unit</th>
              <th class="amount">Qty</th>
              <th class="amount">Amount</th>
            </tr>
          </thead>
          <tbody>
            {invoice.lineItems.data.map((line) => (
              <tr>
                <td safe>{line.description ?? line.price?.product?.name ?? '—'}</td>
                <td class="amount hide-narrow" safe>
                  {money(line.unitAmount, invoice.currency)}
                </td>
                <td class="amount">{line.quantity}</td>
                <td class="amount" safe>
                  {money(lineAmount(line), invoice.currency)}
                </td>
              </tr>
            ))}
            {invoiceTotals(invoice).map((row) => (
              <tr class={row.kind === 'total' ? 'total-row' : undefined}>
                <td colspan="2" safe>
                  {row.label}
                </td>
                <td class="hide-narrow" />
                <td class="amount" safe>
                  {money(row.amount, invoice.currency)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
    </Card>
  );
}
