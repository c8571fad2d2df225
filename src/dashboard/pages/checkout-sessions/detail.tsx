import { everyNetwork } from '../../../chain-ingest/rail.ts';
import { explorerLinkOf, shownTransactionHash } from '../../../chain-ingest/network-definition.ts';
import type { PaymentIntentStatus, SessionSweep } from '../../../../machines/checkout-session.types.ts';
import type { RecordedEvent } from '../../../event-store/event-store.ts';
import {
  COLLECTIONS,
  type CheckoutSessionDoc,
  type WebhookDeliveryDoc,
  type WebhookEndpointDoc,
} from '../../../projections/collections.ts';
import type { DashboardDeps, DashboardTenant } from '../../context.ts';
import type { RailNetwork } from '../../../chain-ingest/rail.ts';
import { HASH_FORMATS } from '../../ui/form-parts.tsx';
import {
  Badge,
  Card,
  CsrfField,
  DateTime,
  EmptyState,
  Facts,
  Field,
  liveRefresh,
  money,
  paymentAmountOf,
  ShortId,
  TableScroll,
  type Tone,
  assetMoney,
} from '../../ui/components.tsx';
import { SelectField } from '../../ui/form-parts.tsx';
import { DeliveryStatus } from '../../ui/delivery-status.tsx';
import { type PayAt, payerStatus } from '../../../hosted/checkout-status.ts';
import { sessionTotals } from '../../../hosted/totals.ts';
import {
  allSentBefore,
  amountOf,
  type ClosedMoney,
  howSent,
  type MoneyAtClose,
  latePaidInvoice,
  moneyAtClose,
  sentBeforeMoney,
} from '../../../../machines/checkout-session.late.ts';
import { withInvoicesPaidLate } from '../../invoices-paid-late.ts';
import type { InvoiceDoc } from '../../../projections/invoices.projection.ts';
import { describeType } from '../audit-trail/changes.ts';
import { lateName, LIST_PATH, SessionCustomer, STATUS } from './list.tsx';
import { withQuery } from '../../ui/list-controls.tsx';
import { customersById } from '../../ui/customer-link.tsx';
import type { CustomerDoc } from '../../../projections/customers.projection.ts';

export type SessionDetail = {
  session: CheckoutSessionDoc;
  /** The session's customer (`customerId`), when it has one the read store holds. */
  customer?: CustomerDoc;
  /** The session's invoice, when it has one its late money paid (`withInvoicesPaidLate`). */
  invoice?: InvoiceDoc;
  timeline: RecordedEvent[];
  deliveries: WebhookDeliveryDoc[];
  endpoints: Map<string, string>;
  networks: RailNetwork[];
};

/** The session with what the page shows around it: its events from the log, its webhooks and the networks. */
export async function loadDetail(
  deps: DashboardDeps,
  tenant: DashboardTenant,
  id: string,
): Promise<SessionDetail | null> {
  const found = await deps.readStore.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions).get(id);
  if (!found || found.organizationId !== tenant.organizationId || found.environment !== tenant.environment) return null;
  // Late money that paid its invoice is not to settle: the invoice's log says which, not the session's.
  const {
    sessions: [session],
    invoices,
  } = await withInvoicesPaidLate(deps.readStore, tenant, [found]);
  if (!session) return null;
  const invoice = session.invoiceId ? invoices.get(session.invoiceId) : undefined;
  const streamId = `checkout_session-${session.id}`;
  const [timeline, deliveries, customers] = await Promise.all([
    deps.eventStore.readStream(streamId),
    deps.readStore
      .collection<WebhookDeliveryDoc>(COLLECTIONS.webhookDeliveries)
      .find({ ...tenant, 'source.streamId': streamId }, { sort: { createdAt: 1, _id: 1 } }),
    customersById(deps.readStore, tenant, [session.customerId]),
  ]);
  const endpoints = await deps.readStore
    .collection<WebhookEndpointDoc>(COLLECTIONS.webhookEndpoints)
    .find({ ...tenant, id: { $in: [...new Set(deliveries.map((d) => d.endpointId))] } });
  const customer = session.customerId ? customers.get(session.customerId) : undefined;
  return {
    session,
    ...(customer ? { customer } : {}),
    ...(invoice && latePaidInvoice(session).length > 0 ? { invoice } : {}),
    timeline,
    deliveries,
    endpoints: new Map(endpoints.map((e) => [e.id, e.url])),
    networks: everyNetwork(deps.rail).filter((n) => n.environment === tenant.environment),
  };
}

/**
 * A link to the transaction on the network's explorer (the hash alone when the network is unknown or
 * has none), the hash as the network's tools show it (a Tron txID bare).
 */
function TxLink({ hash, network, networks }: { hash: string; network: string; networks: RailNetwork[] }): JSX.Element {
  const found = networks.find((n) => n.network === network);
  const href = found ? explorerLinkOf(found, hash) : null;
  const shown = shownTransactionHash(found?.kind ?? null, hash);
  if (!href) return <ShortId value={shown} keep={10} />;
  return (
    <a href={href} rel="noopener noreferrer" target="_blank">
      <ShortId value={shown} keep={10} />
      <span class="visually-hidden"> (opens the explorer)</span>
    </a>
  );
}

const networkName = (networks: RailNetwork[], network: string): string =>
  networks.find((n) => n.network === network)?.name ?? network;

export type ActionForm = {
  message?: { tone: 'danger' | 'success'; text: string };
  recover?: {
    chainId: string;
    transactionHash: string;
    errors: Partial<Record<'chainId' | 'transactionHash', string>>;
  };
};

function Actions({
  detail,
  csrf,
  canManage,
  form,
}: {
  detail: SessionDetail;
  csrf: string;
  canManage: boolean;
  form: ActionForm;
}) {
  const { session } = detail;
  const base = `${LIST_PATH}/${encodeURIComponent(session.id)}`;
  const recover = form.recover ?? { chainId: '', transactionHash: '', errors: {} };
  return (
    <Card id="session-actions" title="Actions">
      {!canManage ? (
        <p class="muted">Only an admin or owner can act on a session.</p>
      ) : (
        <>
          <div class="action-row">
            {session.status === 'open' ? (
              <form method="post" action={`${base}/cancel`}>
                <CsrfField token={csrf} />
                <button type="submit" class="button button-danger">
                  Cancel session
                </button>
              </form>
            ) : (
              ''
            )}
            {session.status === 'incomplete' ? (
              <>
                <form method="post" action={`${base}/complete-partial`}>
                  <CsrfField token={csrf} />
                  <button type="submit" class="button button-primary">
                    Complete with the amount received
                  </button>
                </form>
                <p class="muted" id="no-cancel-partly-paid">
                  Part of the amount was received, so this session cannot be canceled: complete it with the amount
                  received, or wait for the payer to send the rest.
                </p>
              </>
            ) : (
              ''
            )}
            {session.status !== 'open' && session.status !== 'incomplete' ? (
              <p class="muted">This session can no longer be canceled or completed.</p>
            ) : (
              ''
            )}
          </div>
          {/* Kept as it is when the live body is redrawn: a hash being typed keeps its value and focus. */}
          <form
            id="recover-form"
            hx-preserve="true"
            method="post"
            action={`${base}/recover`}
            class="recover-form"
            aria-label="Recover a payment"
          >
            <h3>Recover a missed payment</h3>
            <p class="muted small">A transfer Weir did not see: give its network and transaction hash.</p>
            <CsrfField token={csrf} />
            <div class="filters-fields">
              <SelectField
                name="chainId"
                label="Network"
                value={recover.chainId}
                error={recover.errors.chainId}
                options={[
                  { value: '', label: 'Pick a network' },
                  ...detail.networks.map((n) => ({ value: String(n.chainId), label: n.name })),
                ]}
              />
              <Field
                name="transactionHash"
                label="Transaction hash"
                value={recover.transactionHash}
                error={recover.errors.transactionHash}
                hint={HASH_FORMATS}
              />
            </div>
            <button type="submit" class="button button-secondary">
              Recover
            </button>
          </form>
        </>
      )}
    </Card>
  );
}

/**
 * What the merchant has received, after Weir's fee, never below nothing: once complete the API's
 * amountNet (all it received); closed, what came before the close (late money is the payer's to
 * settle, not the order's); open or underpaid, what has arrived so far.
 */
const netReceived = (session: CheckoutSessionDoc, paid: MoneyAtClose['paid']): bigint => {
  if (session.status === 'complete') return BigInt(session.amountNet);
  const net = paid.beforeClose - BigInt(session.amountFee);
  return net > 0n ? net : 0n;
};

const isClosed = (session: CheckoutSessionDoc): boolean =>
  session.status === 'expired' || session.status === 'canceled';

/**
 * Why Net is not the API's amountNet, said only where they differ at a closed session: amountNet stays
 * of the total (what it would have netted paid in full), and late money is never in Net. An open
 * session's Net grows toward amountNet as it is paid, which needs no note.
 */
function netNotes(session: CheckoutSessionDoc, late: ClosedMoney | null, net: bigint): string[] {
  if (!isClosed(session)) return [];
  const c = session.currency;
  const notes = late ? [`Late money (${amountOf(late, (a) => money(a, c))}) is not in it.`] : [];
  if (net !== BigInt(session.amountNet))
    notes.push(`The API's amountNet (${money(session.amountNet, c)}) is what it would have netted if paid in full.`);
  return notes;
}

/** Paid, or not: a session waiting for the rest of its amount is neither, nor one paid after it closed. */
const paymentOf = (session: CheckoutSessionDoc, { paidAfterClose, late }: MoneyAtClose): string => {
  if (paidAfterClose) {
    return `${lateName(late)} — ${late.refundedAt ? 'marked refunded' : 'needs refund or review'}`;
  }
  const closed = session.status === 'expired' || session.status === 'canceled';
  if (closed && latePaidInvoice(session).length > 0) return 'Paid late — paid its invoice';
  return session.paymentStatus === 'paid' ? 'Paid' : session.status === 'incomplete' ? 'Part paid' : 'Unpaid';
};

export function Summary({
  session,
  customer,
  timeZone,
}: {
  session: CheckoutSessionDoc;
  customer?: CustomerDoc;
  timeZone: string;
}): JSX.Element {
  const c = session.currency;
  // Closed, the API's amountReceived counts late money too: a merchant read it as the order paid. The
  // Summary splits it as the late-money card tells it; late money after a short completion is the merchant's.
  const atClose = moneyAtClose(session);
  const { paid, lateReceived: late } = atClose;
  const received: [string, string] = paid.afterClose
    ? [`Received before ${session.status === 'canceled' ? 'the cancel' : 'it expired'}`, money(paid.beforeClose, c)]
    : ['Received', money(session.amountReceived, c)];
  const net = netReceived(session, paid);
  const notes = netNotes(session, paid.afterClose, net);
  // Partly paid, a session no longer expires (its timer is dropped); complete, when it would have is moot.
  const completedAt = session.status === 'complete' ? session.completedAt : null;
  return (
    <Card id="session-summary" title="Summary">
      <Facts
        items={[
          ['Amount', money(session.amountTotal, c)],
          received,
          ...(BigInt(session.amountOverpaid) > 0n ? [['Overpaid', money(session.amountOverpaid, c)] as const] : []),
          ...(late.payments.length > 0 ? [[lateName(late), amountOf(late, (a) => money(a, c))] as const] : []),
          ['Fee', money(session.amountFee, c)],
          notes.length === 0
            ? ['Net', money(net, c)]
            : [
                'Net',
                () => (
                  <>
                    <span safe>{money(net, c)}</span>
                    <div class="muted small" id="net-note" safe>
                      {notes.join(' ')}
                    </div>
                  </>
                ),
              ],
          ['Status', () => <Badge tone={STATUS[session.status].tone} label={STATUS[session.status].text} />],
          ['Payment', paymentOf(session, atClose)],
          ['Created', () => <DateTime iso={session.createdAt} timeZone={timeZone} />],
          completedAt
            ? ['Completed', () => <DateTime iso={completedAt} timeZone={timeZone} />]
            : session.status === 'incomplete'
              ? ['Expires', 'No longer: it waits for the rest']
              : ['Expires', () => <DateTime iso={session.expiresAt} timeZone={timeZone} />],
          ['Customer', () => <SessionCustomer session={session} customer={customer} />],
          ['Client reference', session.clientReferenceId ?? '—'],
          ['Mode', session.mode],
        ]}
      />
    </Card>
  );
}

/** How a session ended, as "arrived after this session …" goes on. */
const ENDED: Partial<Record<CheckoutSessionDoc['status'], string>> = {
  expired: 'expired',
  canceled: 'was canceled',
  complete: 'was completed with the amount received',
};

/** What the payer's page told them of late money: sent before the close, it says the money does not complete the checkout. */
const payerTold = (late: ClosedMoney, status: CheckoutSessionDoc['status']): string =>
  `The payer's checkout page told them ${howSent(late) !== 'after' ? `this money does not complete the ${status} checkout` : 'the money arrived late'} and that you will settle it with them.`;

/**
 * How money reached a session after it ended (`ended`, as ENDED says it), confirmed or still confirming:
 * all after the close, all sent before it (a cancel, or an old log's expiry) and confirmed across it, or some of each, as the payer's page tells it.
 */
function arrival(came: ClosedMoney, c: string, ended: string, confirming: boolean): string {
  // It starts the sentence: dust reads "Less than 0.00000001 USDC".
  const shown = amountOf(came, (a) => money(a, c));
  const amount = `${shown.charAt(0).toUpperCase()}${shown.slice(1)}`;
  if (howSent(came) === 'after')
    return confirming
      ? `${amount} reached the deposit address after this session ${ended}; it is being confirmed`
      : `${amount} arrived after this session ${ended}`;
  if (allSentBefore(came))
    return `${amount} was sent before this session ${ended} and ${confirming ? 'is still being confirmed' : 'confirmed after it'}`;
  const before = amountOf(sentBeforeMoney(came), (a) => money(a, c));
  return confirming
    ? `${amount} reached the deposit address (${before} of it sent before this session ${ended}, the rest after); it is being confirmed`
    : `${amount} was confirmed after this session ${ended} (${before} of it sent before ${came.close}, the rest after)`;
}
const KEEP_OR_REFUND =
  'It only makes up what was asked, so it is yours to keep: nothing to do. To refund it instead, send it from your own wallet (they paid from ';
const REFUND_EXCESS = 'Refund the excess to them from your own wallet: Weir holds no funds and sends nothing back.';

/** The addresses that paid `payments`, each once, shortened. */
function Payers({ payments }: { payments: CheckoutSessionDoc['payments'] }): JSX.Element {
  const from = [...new Set(payments.map((p) => p.fromAddress))];
  return (
    <>
      {from.map((address, i) => (
        <>
          {i > 0 ? ', ' : ''}
          <ShortId value={address} keep={8} />
        </>
      ))}
    </>
  );
}

/**
 * What an overpaid session's merchant sends back and where: the excess, and each address that paid
 * (whole and wrapping, to copy into a wallet; the payments table cuts it and hides it on a phone).
 */
function RefundTo({ session, networks }: { session: CheckoutSessionDoc; networks: RailNetwork[] }): JSX.Element {
  const paid = session.payments.filter((p) => p.status === 'confirmed');
  const payers = [...new Map(paid.map((p) => [`${p.network} ${p.fromAddress}`, p])).values()];
  return (
    <Facts
      items={[
        ['Excess to refund', money(session.amountOverpaid, session.currency)],
        ...payers.map(
          (p) =>
            [
              payers.length > 1 ? `Refund to (${networkName(networks, p.network)})` : 'Refund to',
              () => (
                <span>
                  <code class="break refund-address" safe>
                    {p.fromAddress}
                  </code>
                  <span class="cell-note muted" safe>{`on ${networkName(networks, p.network)}`}</span>
                </span>
              ),
            ] as const,
        ),
      ]}
    />
  );
}

/**
 * Money the session holds no place for, and what the merchant does about it: a payment confirmed after
 * the session closed (refund it, then mark it refunded), one after it was completed short (yours to
 * keep: no more than the total, said for information), an overpayment (refund the excess), or a
 * payment still confirming after the close. Weir
 * holds no funds, so every refund is the merchant's own transfer; nothing shows when there is none.
 */
/**
 * Late money the session's invoice counted while owed, in one line naming the invoice: it paid it,
 * so it is not money to refund (any the invoice took past its total is its overpayment, told there).
 */
export function LatePaidInvoice({
  session,
  invoice,
}: {
  session: CheckoutSessionDoc;
  invoice: InvoiceDoc | undefined;
}): JSX.Element {
  const paid = latePaidInvoice(session);
  if (!invoice || paid.length === 0) return <></>;
  return (
    <p id="late-paid-invoice" class="card">
      {paid.length === 1 ? 'This late payment' : 'These late payments'} paid invoice{' '}
      <a href={`/dashboard/invoices/${encodeURIComponent(invoice.id)}`} safe>
        {invoice.number}
      </a>
      : the invoice counts {paid.length === 1 ? 'it' : 'them'}, so there is nothing to refund.
    </p>
  );
}

export function MoneyToSettle({
  session,
  csrf,
  canManage,
  timeZone,
  networks = [],
}: {
  session: CheckoutSessionDoc;
  /** The networks' names, for where the payer is refunded. */
  networks?: RailNetwork[];
  csrf: string;
  canManage: boolean;
  timeZone: string;
}): JSX.Element {
  const c = session.currency;
  // Marked refunded and paid late again: only the money after the mark is still to settle.
  const { late: lateMoneyOf, paidAfterClose, confirming: arriving } = moneyAtClose(session);
  const { payments: latePayments, refundedAt: refunded } = lateMoneyOf;
  const ended = ENDED[session.status] ?? 'closed';
  const base = `${LIST_PATH}/${encodeURIComponent(session.id)}`;
  // Marked refunded, then paid late again: the mark (once per session) does not cover the new money.
  const markedBefore = refunded === null ? session.paymentIntent.markRefundedAt : null;
  const arrived = arrival(lateMoneyOf, c, ended, false);
  if (paidAfterClose && refunded)
    return (
      <Card id="money-to-settle" title={`${lateName(lateMoneyOf)} — refunded`}>
        <p>
          <span safe>{`${arrived}. It was marked refunded on `}</span>
          <DateTime iso={refunded} timeZone={timeZone} />.
        </p>
        {session.paymentIntent.markRefundedComment ? (
          <p class="muted" safe>{`Note: ${session.paymentIntent.markRefundedComment}`}</p>
        ) : (
          ''
        )}
      </Card>
    );
  if (paidAfterClose)
    return (
      <Card id="money-to-settle" title={`${lateName(lateMoneyOf)} — needs refund or review`} class="card-attention">
        <p
          safe
        >{`${arrived}, so it did not complete the session and its payment status stays unpaid. ${payerTold(lateMoneyOf, session.status)}`}</p>
        {markedBefore ? (
          <p>
            It was marked refunded on <DateTime iso={markedBefore} timeZone={timeZone} />, and more arrived after that:
            the mark does not cover it and cannot be made again. Refund the payer from your own wallet (they paid from{' '}
            <Payers payments={latePayments} />
            ), or settle it with them another way.
          </p>
        ) : (
          <p>
            Weir holds no funds: refund the payer from your own wallet (they paid from{' '}
            <Payers payments={latePayments} />
            ), or settle it with them another way, then mark it refunded here.
          </p>
        )}
        {markedBefore ? (
          ''
        ) : canManage ? (
          <form method="post" action={`${base}/mark-refunded`}>
            <CsrfField token={csrf} />
            <Field
              name="markRefundedComment"
              label="Note (optional)"
              hint="How it was settled, such as your refund's transaction hash. Up to 500 characters."
              maxlength={500}
            />
            <button type="submit" class="button button-primary">
              Mark as refunded
            </button>
          </form>
        ) : (
          <p class="muted">An admin or owner can mark it refunded once it is settled.</p>
        )}
      </Card>
    );
  // Here late money came after a short completion (LatePaymentReceived): the machine calls it late only
  // while it makes up no more than the total, so it is the merchant's to keep; past the total is the excess.
  const afterCompletion =
    latePayments.length > 0 ? (
      <p>
        <span safe>{`${arrived} (it asked ${money(session.amountTotal, c)}). ${KEEP_OR_REFUND}`}</span>
        <Payers payments={latePayments} />
        ): Weir holds no funds and sends nothing back.
      </p>
    ) : (
      ''
    );
  if (BigInt(session.amountOverpaid) > 0n)
    return (
      <Card id="money-to-settle" title="Overpaid — refund the excess" class="card-attention">
        <p>
          <span safe>{`The payer sent ${money(session.amountOverpaid, c)} more than the total. ${REFUND_EXCESS}`}</span>
        </p>
        <RefundTo session={session} networks={networks} />
        {afterCompletion}
      </Card>
    );
  if (latePayments.length > 0)
    return (
      <Card id="money-to-settle" title="Paid after completion">
        {afterCompletion}
      </Card>
    );
  if (arriving.payments.length > 0)
    return (
      <Card
        id="money-to-settle"
        title={
          allSentBefore(arriving)
            ? `Payment confirming after ${arriving.close}`
            : 'Payment arriving after the session ended'
        }
        class="card-attention"
      >
        <p safe>
          {`${arrival(arriving, c, ended, true)}. Once confirmed it ${
            howSent(arriving) !== 'after' ? 'does not complete the session: it ' : ''
          }is a late payment, to refund or settle with the payer.`}
        </p>
      </Card>
    );
  return <></>;
}

/** "USDC on Base": an asset by its symbol and network's name. */
const assetOn = (detail: SessionDetail, symbol: string, network: string): string =>
  `${symbol} on ${networkName(detail.networks, network)}`;

/** The hosted page's payment request makes no wallet request here: only the amount it asks is read. */
const noRequest: PayAt = (address) => ({ uri: '', payee: address.paymentAddress });

type AskedNow = { raw: bigint; shown: string };

/**
 * What the payer's page asks now in the chosen asset (chain units, and as the page writes it), from
 * `payerStatus` itself so the two never disagree; null once nothing is asked (covered, or the session is over).
 */
function askedNow(detail: SessionDetail): AskedNow | null {
  // The clock only stamps the status's `now`, unused here.
  const { payment } = payerStatus(detail.session, (n) => networkName(detail.networks, n), 0, undefined, noRequest);
  if (!payment) return null;
  const raw = BigInt(payment.amountDueRaw);
  return { raw, shown: assetMoney(raw, payment.decimals, payment.symbol) };
}

/** "Left to pay" once an asset is chosen: what the payer is asked now; 0 when covered or paid, none once closed unpaid. */
function leftToPay(
  session: CheckoutSessionDoc,
  asked: AskedNow | null,
  asset: { decimals: number; symbol: string },
): string {
  if (asked) return asked.shown;
  return session.status === 'expired' || session.status === 'canceled'
    ? '—'
    : assetMoney(0n, asset.decimals, asset.symbol);
}

/** The payment intent's status as the dashboard names it, beside the session's own (`STATUS`). */
export const INTENT_STATUS: Record<PaymentIntentStatus | 'awaiting_rest', { tone: Tone; text: string }> = {
  requires_payment_method: { tone: 'info', text: 'Awaiting payment' },
  processing: { tone: 'info', text: 'Payment in progress' },
  awaiting_rest: { tone: 'warning', text: 'Awaiting the rest' },
  succeeded: { tone: 'success', text: 'Succeeded' },
  canceled: { tone: 'neutral', text: 'Canceled' },
};

/**
 * The intent stays `processing` once part is paid and confirmed, though nothing is on its way then:
 * "in progress" only while a payment awaits confirmation (or a reorged one is awaited back).
 */
function intentStatusOf(session: CheckoutSessionDoc): { tone: Tone; text: string } {
  const { status } = session.paymentIntent;
  const inFlight = session.payments.some((p) => p.status === 'pending' || p.mayReturn === true);
  return INTENT_STATUS[status === 'processing' && !inFlight ? 'awaiting_rest' : status];
}

export function PaymentIntentCard({ detail }: { detail: SessionDetail }): JSX.Element {
  const { paymentIntent: pi, currency, payments } = detail.session;
  const method = pi.paymentMethod;
  // A payer may pay without choosing on the page (an address reused, a recovery): the payment tells the asset.
  const paidWith = payments.find((p) => p.status !== 'withdrawn');
  const asked = method ? askedNow(detail) : null;
  const intent = intentStatusOf(detail.session);
  return (
    <Card id="payment-intent" title="Payment intent">
      <Facts
        items={[
          ['Id', () => <ShortId value={pi.id} keep={10} />],
          ['Status', () => <Badge tone={intent.tone} label={intent.text} />],
          ['Amount', money(pi.amount, currency)],
          ['Received', money(pi.amountReceived, currency)],
          [
            'Paying with',
            method
              ? assetOn(
                  detail,
                  method.asset.symbol,
                  detail.networks.find((n) => n.chainId === method.asset.chainId)?.network ??
                    String(method.asset.chainId),
                )
              : paidWith
                ? `${assetOn(detail, paidWith.asset.symbol, paidWith.network)} (paid without choosing on the page)`
                : 'Not chosen yet',
          ],
          ['Left to pay', method ? leftToPay(detail.session, asked, method.asset) : '—'],
          // What choosing the asset asked: worth showing only once a payment has made it stale.
          ...(method && BigInt(method.amountDue) !== (asked?.raw ?? 0n)
            ? [
                [
                  'Asked when chosen',
                  assetMoney(BigInt(method.amountDue), method.asset.decimals, method.asset.symbol),
                ] as const,
              ]
            : []),
          [
            'Deposit address',
            method || paidWith
              ? () => <ShortId value={method?.accountAddress ?? paidWith!.toAddress} keep={10} />
              : '—',
          ],
        ]}
      />
    </Card>
  );
}

function Addresses({ detail }: { detail: SessionDetail }): JSX.Element {
  return (
    <Card id="deposit-addresses" title="Deposit addresses">
      <TableScroll label="Deposit address of each asset">
        <table>
          <thead>
            <tr>
              <th>Network</th>
              <th>Asset</th>
              <th>Address</th>
            </tr>
          </thead>
          <tbody>
            {detail.session.addresses.map((a) => (
              <tr>
                <td safe>{networkName(detail.networks, a.network)}</td>
                <td safe>{a.asset.symbol}</td>
                <td>
                  <ShortId value={a.paymentAddress} keep={10} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
    </Card>
  );
}

const PAYMENT_STATUS = {
  pending: { tone: 'info', text: 'Confirming' },
  confirmed: { tone: 'success', text: 'Confirmed' },
  withdrawn: { tone: 'danger', text: 'Withdrawn' },
} as const;

function Transactions({ detail, timeZone }: { detail: SessionDetail; timeZone: string }): JSX.Element {
  const { payments } = detail.session;
  return (
    <Card id="transactions" title="On-chain payments">
      {payments.length === 0 ? (
        <EmptyState
          message="No payment seen yet."
          hint="Transfers to the deposit addresses show here as they arrive."
        />
      ) : (
        <TableScroll label="Each payment with its transaction">
          <table>
            <thead>
              <tr>
                <th class="amount">Amount</th>
                <th>Status</th>
                <th>Transaction</th>
                <th class="hide-narrow">Network</th>
                <th class="hide-narrow">From</th>
                <th class="hide-narrow">Seen</th>
              </tr>
            </thead>
            <tbody>
              {payments.map((p) => (
                <tr>
                  <td class="amount" safe>
                    {paymentAmountOf(p, p.asset.symbol)}
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
                  <td>
                    <TxLink hash={p.transactionHash} network={p.network} networks={detail.networks} />
                  </td>
                  <td class="hide-narrow" safe>
                    {networkName(detail.networks, p.network)}
                  </td>
                  <td class="hide-narrow">
                    <ShortId value={p.fromAddress} />
                  </td>
                  <td class="hide-narrow nowrap">
                    <DateTime iso={p.detectedAt} timeZone={timeZone} />
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

/** What the payer is charged for: each line's name and quantity, its unit amount and its total. */
export function LineItems({ session }: { session: CheckoutSessionDoc }): JSX.Element {
  const lines = session.lineItems.data;
  return (
    <Card id="line-items" title="Line items">
      {lines.length === 0 ? (
        <p class="muted">No line items: the session was created for an amount.</p>
      ) : (
        <TableScroll label="Each line with its unit amount and amount, then the totals">
          <table>
            <thead>
              <tr>
                <th>Item</th>
                <th class="amount">Unit amount</th>
                <th class="amount">Amount</th>
              </tr>
            </thead>
            <tbody>
              {lines.map((line) => (
                <tr>
                  <td safe>{`${line.price.product.name || line.description || 'Item'} × ${line.quantity}`}</td>
                  <td class="amount nowrap" safe>
                    {money(line.price.unitAmount, line.currency)}
                  </td>
                  <td class="amount nowrap" safe>
                    {money(line.amountSubtotal, line.currency)}
                  </td>
                </tr>
              ))}
              {/* The hosted page's rows: lines with their tax in them and no discount or fee row did not make the total. */}
              {sessionTotals(session).map((row) => (
                <tr class={row.kind === 'total' ? 'total-row' : undefined}>
                  <td colspan="2" safe>
                    {row.label}
                  </td>
                  <td class="amount nowrap" safe>
                    {`${row.kind === 'discount' ? '−' : ''}${money(row.amount, session.currency)}`}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      <Facts
        items={[
          [
            'Checkout URL',
            () => (
              <a href={session.url} class="break" safe>
                {session.url}
              </a>
            ),
          ],
          [
            'Success URL',
            () => (
              <code class="break" safe>
                {session.successUrl}
              </code>
            ),
          ],
          ...(session.cancelUrl
            ? [
                [
                  'Cancel URL',
                  () => (
                    <code class="break" safe>
                      {session.cancelUrl}
                    </code>
                  ),
                ] as const,
              ]
            : []),
        ]}
      />
    </Card>
  );
}

/**
 * The amount a sweep moved (the transfers it swept, in the asset's units) and the merchant wallet it
 * went to: as its event names it, else (a sweep recorded before it did) the deposit's binding.
 */
function sweepShown(session: CheckoutSessionDoc, sweep: SessionSweep): { moved: string; destination: string | null } {
  const swept = session.payments.filter((p) => sweep.transferIds.includes(p.transferId));
  const asset = swept[0]?.asset;
  const total = swept.reduce((sum, p) => sum + BigInt(p.amountRaw), 0n);
  // An EVM deposit address is checksummed on the session and lowercase on its payments.
  const deposit = session.addresses.find((a) =>
    swept.some((p) => p.toAddress.toLowerCase() === a.paymentAddress.toLowerCase()),
  );
  return {
    moved: asset ? assetMoney(total, asset.decimals, asset.symbol) : '—',
    destination: sweep.merchantAddress ?? deposit?.merchantAddress ?? null,
  };
}

function Sweeps({ detail, timeZone }: { detail: SessionDetail; timeZone: string }): JSX.Element {
  const { sweeps } = detail.session;
  return (
    <Card id="sweeps" title="Sweeps to your wallet">
      {sweeps.length === 0 ? (
        <EmptyState
          message="Nothing swept yet."
          hint="Once a payment is final, its funds move from the deposit address to your wallet and show here."
        />
      ) : (
        <TableScroll label="Each sweep with its transaction">
          <table>
            <thead>
              <tr>
                <th class="amount">Amount moved</th>
                <th>Transaction</th>
                <th>To</th>
                <th class="hide-narrow">When</th>
              </tr>
            </thead>
            <tbody>
              {sweeps.map((s) => {
                const shown = sweepShown(detail.session, s);
                return (
                  <tr>
                    <td class="amount nowrap">
                      {s.reverted ? (
                        <Badge tone="danger" label="Reverted: nothing moved" />
                      ) : (
                        <span safe>{shown.moved}</span>
                      )}
                    </td>
                    <td>
                      <TxLink hash={s.transactionHash} network={s.network} networks={detail.networks} />
                    </td>
                    <td>{shown.destination ? <ShortId value={shown.destination} keep={8} /> : '—'}</td>
                    <td class="hide-narrow nowrap">
                      <DateTime iso={s.at} timeZone={timeZone} />
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </TableScroll>
      )}
    </Card>
  );
}

/** What a timeline entry adds to its name: a sweep's amount and destination. */
function TimelineDetail({ event, session }: { event: RecordedEvent; session: CheckoutSessionDoc }): JSX.Element {
  if (event.type !== 'FundsSwept') return <></>;
  const sweep = (event.data as { sweep: SessionSweep }).sweep;
  if (sweep.reverted) return <span class="small">Reverted: nothing moved, its gas paid</span>;
  const shown = sweepShown(session, sweep);
  return (
    <span class="small">
      <span safe>{`${shown.moved} to `}</span>
      {shown.destination ? <ShortId value={shown.destination} keep={8} /> : 'your wallet'}
    </span>
  );
}

function Timeline({
  events,
  session,
  timeZone,
}: {
  events: RecordedEvent[];
  session: CheckoutSessionDoc;
  timeZone: string;
}): JSX.Element {
  return (
    <Card id="timeline" title="Timeline">
      <ol class="timeline">
        {[...events].reverse().map((e) => (
          <li>
            <strong safe>{describeType(e.type)}</strong>
            <TimelineDetail event={e} session={session} />
            <span class="muted small">
              <DateTime iso={e.metadata.occurredAt} timeZone={timeZone} /> <span safe>{`· ${e.metadata.actor}`}</span>
            </span>
          </li>
        ))}
      </ol>
      <p class="small">
        <a
          href={withQuery('/dashboard/audit-trail', {
            recordType: 'checkout_session',
            system: 'show',
            recordId: session.id,
          })}
        >
          What each event changed, in the audit trail
        </a>
      </p>
    </Card>
  );
}

function Webhooks({ detail, timeZone }: { detail: SessionDetail; timeZone: string }): JSX.Element {
  return (
    <Card id="webhooks" title="Webhooks sent">
      {detail.deliveries.length === 0 ? (
        <EmptyState
          message="No webhook for this session."
          hint="Events your endpoints subscribe to show here with each attempt."
        />
      ) : (
        <ul class="deliveries">
          {detail.deliveries.map((d) => (
            <li>
              <div class="delivery-head">
                <code safe>{d.eventType}</code>
                <DeliveryStatus delivery={d} timeZone={timeZone} />
                <span class="muted small" safe>
                  {`to ${detail.endpoints.get(d.endpointId) ?? d.endpointId}`}
                </span>
              </div>
              {d.log.length === 0 ? (
                <p class="muted small">Not attempted yet.</p>
              ) : (
                <TableScroll label={`Attempts of ${d.eventType}`}>
                  <table class="attempts">
                    <caption class="visually-hidden" safe>
                      {`Attempts of ${d.eventType}`}
                    </caption>
                    <thead>
                      <tr>
                        <th>Attempt</th>
                        <th>When</th>
                        <th>Answer</th>
                        <th class="amount">Duration</th>
                      </tr>
                    </thead>
                    <tbody>
                      {d.log.map((a) => (
                        <tr>
                          <td>{a.attempt}</td>
                          <td class="nowrap">
                            <DateTime iso={a.at} timeZone={timeZone} />
                          </td>
                          <td safe>{a.statusCode ? `HTTP ${a.statusCode}` : (a.error ?? 'no answer')}</td>
                          <td class="amount" safe>{`${a.durationMs} ms`}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </TableScroll>
              )}
            </li>
          ))}
        </ul>
      )}
    </Card>
  );
}

/**
 * The page body: refreshed as a whole (htmx) when the session, its payments or its webhooks change,
 * all but the recovery form (hx-preserve), which may be half typed.
 */
export function DetailBody(props: {
  detail: SessionDetail;
  csrf: string;
  canManage: boolean;
  form: ActionForm;
  /** The dashboard's zone, every time shown in it. */
  timeZone: string;
}): JSX.Element {
  const id = props.detail.session.id;
  const { timeZone } = props;
  return (
    <div
      id="session-detail"
      {...liveRefresh(
        // The refresh keeps the zone the page was drawn in (a shared link's `?timezone=` too).
        withQuery(`${LIST_PATH}/${encodeURIComponent(id)}`, { timezone: timeZone }),
        ['checkout-sessions', 'payments', 'webhooks', 'invoices'],
      )}
    >
      <LatePaidInvoice session={props.detail.session} invoice={props.detail.invoice} />
      <MoneyToSettle
        session={props.detail.session}
        csrf={props.csrf}
        canManage={props.canManage}
        timeZone={timeZone}
        networks={props.detail.networks}
      />
      <div class="grid grid-2">
        <Summary session={props.detail.session} customer={props.detail.customer} timeZone={timeZone} />
        <Actions {...props} />
      </div>
      <div class="grid grid-2">
        <PaymentIntentCard detail={props.detail} />
        <Addresses detail={props.detail} />
      </div>
      <LineItems session={props.detail.session} />
      <Transactions detail={props.detail} timeZone={timeZone} />
      <Sweeps detail={props.detail} timeZone={timeZone} />
      <div class="grid grid-2">
        <Timeline events={props.detail.timeline} session={props.detail.session} timeZone={timeZone} />
        <Webhooks detail={props.detail} timeZone={timeZone} />
      </div>
    </div>
  );
}
