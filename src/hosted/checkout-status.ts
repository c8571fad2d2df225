import type { CheckoutSession, SessionAddress } from '../../machines/checkout-session.types.ts';
import type { Invoice } from '../../machines/invoice.types.ts';
import type { BusinessDetails } from '../actors/organization.ts';
import type { PaymentRequest, PaymentWords } from '../chain-ingest/rail.ts';
import { EVM_NETWORKS } from '../chain-ingest/evm/networks/all-networks.ts';
import { DEVNET_CHAIN_ID } from '../chain-ingest/evm/networks/devnet.ts';
import {
  API_DECIMALS,
  addExact,
  documentAmount,
  exactToApi,
  formatAmount,
  fromChainUnits,
  owedInChainUnits,
  subtractExact,
} from '../shared/money.ts';
import { confirmedExact, outstandingExact, sumOfPayments } from '../../machines/checkout-session.received.ts';
import {
  allSentBefore,
  amountOf,
  type ClosedMoney,
  howSent,
  latePaidInvoiceMoney,
  moneyAtClose,
  sentBeforeMoney,
} from '../../machines/checkout-session.late.ts';
import { needsCustomerEmail } from '../../machines/checkout-session.decide.ts';
import { contactPhrase } from './business-footer.ts';
import { documentDate } from './invoice-document.ts';

/** Where the payer goes after completion: the success URL with the session id filled in. */
export const successRedirect = (session: CheckoutSession): string =>
  session.successUrl.replace(/\{CHECKOUT_SESSION_ID\}/g, session.id);

/** The words of a session's payment request: who asks (the organization's name) and for what (its items). */
export function paymentWords(session: CheckoutSession, organizationName: string | null | undefined): PaymentWords {
  const items = session.lineItems.data.map((item) => {
    const name = item.price.product.name || item.description || 'item';
    return item.quantity > 1 ? `${name} ×${item.quantity}` : name;
  });
  const message = items.join(', ');
  return {
    ...(organizationName ? { label: organizationName } : {}),
    // Wallets show a line, not a receipt.
    ...(message ? { message: message.length > 120 ? `${message.slice(0, 119)}…` : message } : {}),
  };
}

/** The request a rail makes of the payer's wallet for `amountDue` (chain units) at a session's address. */
export type PayAt = (address: SessionAddress, amountDue: bigint) => PaymentRequest;

/** What the payer is told, in the words of the page (`state` picks them). */
export type PayerState = 'waiting' | 'confirming' | 'partly_paid' | 'paid' | 'expired' | 'canceled';

/** Blocks a payment on that chain waits for before Weir counts it (the network's default; null: not known here). */
export function confirmationsRequired(chainId: number): number | null {
  if (chainId === DEVNET_CHAIN_ID) return 1;
  return EVM_NETWORKS.find((n) => n.chainId === chainId)?.confirmations ?? null;
}

/** How the page names a network: its registry name ("Local Devnet", "Base"), the bus name otherwise. */
export type NetworkNames = (network: string) => string;

/** A followed network's newest head and the confirmations a payment on it needs (operator settings applied); null: not followed. */
export type ChainProgress = (network: string) => { head: bigint | null; required: number } | null;

/** Confirmations a payment in `blockNumber` has at `head` (its own block counts as one), at most `required`. */
export function confirmationsSoFar(head: bigint, blockNumber: number, required: number): number {
  const have = head - BigInt(blockNumber) + 1n;
  if (have <= 0n) return 0;
  return have >= BigInt(required) ? required : Number(have);
}

const LIVE_BY_ITSELF = 'this page updates by itself';
const LIVE_WHEN_IT_IS = 'this page updates when it is';
/**
 * The clause of a status's detail that says the page follows the session (`; this page updates…`):
 * true only while checkout.js runs, so the page marks it for hiding without the script.
 */
export const LIVE_CLAUSE = new RegExp(`; (${LIVE_BY_ITSELF}|${LIVE_WHEN_IT_IS})`);

/**
 * The session as the payer's page shows it, and as `GET /checkout/{id}/status` answers: the
 * amounts due, paid (confirmed) and remaining, the status in words, and, once an asset is chosen,
 * where and how much to send now (the remaining amount less what is seen but not yet confirmed,
 * in the asset's units; none while that is nothing).
 */
export function payerStatus(
  session: CheckoutSession,
  names: NetworkNames,
  now: number,
  chain: ChainProgress = () => null,
  /** The rail's payment request (none: a preview, nothing to pay). */
  pay?: PayAt,
  /** The session's organization: whom the payer is told to contact (none: "the business"). */
  business?: (Partial<BusinessDetails> & { name: string }) | null,
  /**
   * The session's invoice, `session` read with the late money it counted while owed marked
   * (`withInvoicesPaidLate`, as the dashboard's session page reads it): that money paid the invoice,
   * so the payer is told so, not that it will be settled. None: a session of no invoice, or one read alone.
   */
  invoice?: Pick<Invoice, 'number' | 'status' | 'amountRemaining'> | null,
) {
  const currency = session.currency.toUpperCase();
  const total = BigInt(session.amountTotal);
  const received = BigInt(session.amountReceived);
  // A complete session is owed nothing, one completed short (as is) too: its page asks for no rest.
  const owed = session.status !== 'complete';
  const remaining = owed && total > received ? total - received : 0n;
  const pending = session.payments.filter((p) => p.status === 'pending');
  const pendingExact = sumOfPayments(session.payments, ['pending']);
  const pendingAmount = exactToApi(pendingExact, 'down');
  // Paid in time and taken off the chain by a reorg: the session waits for it to be mined again.
  const returning = session.payments.filter((p) => p.status === 'withdrawn' && p.mayReturn === true);
  const returningExact = sumOfPayments(returning, ['withdrawn']);
  const awaitedAmount = exactToApi(addExact(pendingExact, returningExact), 'down');
  // What to send now: a payment seen but not confirmed yet (or waited for again) is not asked for
  // twice. Exact in chain units; shown on the 10^8 scale rounded up, so a wei still owed shows as 0.00000001.
  const toSendExact = subtractExact(
    subtractExact(outstandingExact(total, confirmedExact(session.payments)), pendingExact),
    returningExact,
  );
  const method = session.paymentIntent.paymentMethod;
  const address = method ? session.addresses.find((a) => a.id === method.id) : undefined;
  // In a chosen asset coarser than 10^-8 the words say what its request asks: the rest rounded up to its unit.
  const coarse = address !== undefined && address.asset.decimals < API_DECIMALS ? address.asset.decimals : null;
  const toSendShown =
    coarse === null
      ? exactToApi(toSendExact, 'up')
      : fromChainUnits(owedInChainUnits(toSendExact, coarse), coarse).amount;
  const toSend = owed && toSendShown > 0n ? toSendShown : 0n;
  const progress = pending[0] ? chain(pending[0].network) : null;
  const required = pending[0] ? (progress?.required ?? confirmationsRequired(pending[0].chainId)) : null;
  // The least confirmed of the pending payments: the page waits for it.
  const current =
    progress?.head != null && required !== null
      ? Math.min(
          ...pending
            .filter((p) => p.network === pending[0]!.network)
            .map((p) => confirmationsSoFar(progress.head!, p.blockNumber, required)),
        )
      : null;
  const money = (amount: bigint) => `${documentAmount(amount)} ${currency}`;
  // Once marked, what the mark covered is settled: the page speaks of money after it alone.
  const { late, confirming: confirmingLate, paidAfterClose, paid } = moneyAtClose(session);
  const { refundedAt } = late;
  const closed = session.status === 'expired' || session.status === 'canceled';
  const paidInvoice = latePaidInvoiceMoney(session);
  const lateBefore = howSent(late) !== 'after';
  const pendingBefore = howSent(confirmingLate);
  // How money seen after (or confirming across) the close arrived: told by its payments, dust seen before included.
  const closedAs = session.status === 'canceled' ? 'was canceled' : 'expired';
  const arrival = (came: ClosedMoney, verb: string, [one, many]: [string, string] = ['', '']) =>
    howSent(came) === 'after'
      ? `Your payment of ${amountOf(came, money)} ${verb} after this checkout was ${session.status}${one}`
      : allSentBefore(came)
        ? `Your payment of ${amountOf(came, money)} was sent before this checkout ${closedAs}${one}`
        : `Your payments of ${amountOf(came, money)} reached this address (${amountOf(sentBeforeMoney(came), money)} of it sent before this checkout ${closedAs}, the rest after)${many}`;

  // What the invoice counted of the late money, and what it still owes (it is paid or owes the rest).
  const counted = (came: ClosedMoney) =>
    invoice
      ? `Invoice ${invoice.number} counts ${amountOf(came, money)} received late${
          invoice.status === 'paid'
            ? ' and is paid'
            : BigInt(invoice.amountRemaining) > 0n
              ? `; ${money(BigInt(invoice.amountRemaining))} is still due on it, to pay from the invoice, not to this address`
              : ''
        }.`
      : '';
  // Said beside other late money to settle or marked refunded: that part alone is told as such.
  const countedToo = paidInvoice.payments.length > 0 ? ` ${counted(paidInvoice)}` : '';

  let state: PayerState;
  let title: string;
  let detail: string;
  if (session.status === 'complete' && total === 0n && received === 0n) {
    // A free order (a 100% promotion code): nothing was paid, so nothing is said to be received.
    state = 'paid';
    title = 'Order complete';
    detail = 'Nothing to pay: this order is complete, thank you.';
  } else if (session.status === 'complete') {
    state = 'paid';
    title = 'Paid';
    detail =
      BigInt(session.amountOverpaid) > 0n
        ? `Payment received, thank you. You sent ${money(BigInt(session.amountOverpaid))} more than was due; contact ${contactPhrase(business)} about it.`
        : 'Payment received, thank you.';
  } else if (closed && invoice && paidInvoice.payments.length > 0 && !paidAfterClose && pending.length === 0) {
    // All the late money paid the session's invoice (counted while owed): owed to no one, nothing to settle.
    state = session.status === 'canceled' ? 'canceled' : 'expired';
    title = invoice.status === 'paid' ? 'Invoice paid' : 'Payment counted on the invoice';
    detail = `${arrival(paidInvoice, 'was received')}. ${counted(paidInvoice)} Do not send anything more to this address.`;
  } else if (paidAfterClose && pending.length === 0 && refundedAt) {
    // Settled by the merchant: the payer learns it was marked refunded, and whom to ask if it has not reached them.
    state = session.status === 'canceled' ? 'canceled' : 'expired';
    title = 'Payment marked refunded';
    detail = `${arrival(late, 'was received')}. The business marked this payment refunded on ${documentDate(refundedAt)}; if the refund has not reached you, contact ${contactPhrase(business)}.${countedToo} Do not send anything more to this address.`;
  } else if (paidAfterClose) {
    // Money that came after the close: the payer must learn it arrived and what happens to it, not only "do not pay".
    state = session.status === 'canceled' ? 'canceled' : 'expired';
    title = allSentBefore(late) ? `Payment received, checkout ${session.status}` : 'Payment received after closing';
    detail = `${arrival(late, 'was received')}. ${
      lateBefore ? `This money does not complete the ${session.status} checkout: the business` : 'The business'
    } has been notified and will settle it with you, by a refund or a credit.${countedToo} Do not send anything more to this address.`;
  } else if ((session.status === 'expired' || session.status === 'canceled') && pending.length > 0) {
    // Seen after the close, or seen before it and confirming after it: not final yet, the payer
    // learns it arrived and what becomes of it (once final it is late money: it completes nothing).
    state = session.status;
    title = allSentBefore(confirmingLate)
      ? `Payment confirming, checkout ${session.status}`
      : 'Payment arriving after closing';
    detail = `${arrival(confirmingLate, 'reached this address', [' and is being confirmed', ' and are being confirmed'])}. Once ${pendingBefore === 'both' ? 'they are' : 'it is'}, ${
      pendingBefore !== 'after' ? `this money does not complete the ${session.status} checkout: ` : ''
    }the business is notified and will settle it with you, by a refund or a credit. Do not send anything more to this address.`;
  } else if (session.status === 'expired') {
    state = 'expired';
    title = 'Expired';
    detail =
      received > 0n
        ? `This checkout expired before it was paid in full (${money(received)} received). Contact ${contactPhrase(business)} about the amount already sent.`
        : 'This checkout expired before it was paid. Do not send a payment to its address.';
  } else if (session.status === 'canceled') {
    state = 'canceled';
    title = 'Canceled';
    detail = 'This checkout was canceled. Do not send a payment to its address.';
  } else if (pending.length > 0) {
    state = 'confirming';
    const plural = (n: number) => `${n} confirmation${n === 1 ? '' : 's'}`;
    const count = required === null ? null : current === null ? plural(required) : `${current} of ${plural(required)}`;
    if (toSend > 0n) {
      title = 'Confirming your payment';
      detail = `${money(pendingAmount)} seen on the network, ${
        count === null ? 'waiting for its confirmations' : current === null ? `waiting for ${count}` : count
      }. Send the remaining ${money(toSend)} to finish.`;
    } else {
      // The full amount is on its way: the payer is told it arrived, not asked again, and not yet told "paid".
      title = 'Payment received';
      detail = `${money(pendingAmount)} received, waiting for the network to confirm it${
        count === null ? '' : ` (${count})`
      }. Nothing more to send; ${LIVE_BY_ITSELF}.`;
    }
  } else if (returning.length > 0) {
    state = 'confirming';
    title = 'Waiting for your payment again';
    detail = `Your payment of ${money(exactToApi(returningExact, 'down'))} was taken off the network by a chain reorganization. Such a payment is usually included again within minutes and still counts as made in time; ${LIVE_WHEN_IT_IS}. Do not send it again.`;
  } else if (received > 0n) {
    state = 'partly_paid';
    title = 'Partly paid';
    detail = `${money(received)} of ${money(total)} received. Send the remaining ${money(toSend)} to finish.`;
  } else {
    state = 'waiting';
    title = 'Waiting for payment';
    detail = method
      ? `Send the amount below; ${LIVE_BY_ITSELF}.`
      : needsCustomerEmail(session)
        ? 'Give your email first: the renewal invoices of this subscription are sent to it.'
        : 'Choose how you want to pay.';
  }

  let payment = null;
  // No request while what was sent covers the rest: a request for 0 is no request (the page asks for nothing).
  if (pay && address && method && toSend > 0n && (session.status === 'open' || session.status === 'incomplete')) {
    // Rounded up: a 6-decimal token cannot carry every 10^-8 of the rest, and paying less leaves it
    // open. From the exact rest: an 18-decimal token 1 wei short is asked for 1 wei, not 10^10.
    const dueRaw = owedInChainUnits(toSendExact, address.asset.decimals);
    const request = pay(address, dueRaw);
    payment = {
      assetId: address.id,
      symbol: address.asset.symbol,
      assetName: address.asset.name,
      network: address.network,
      networkName: names(address.network),
      chainId: address.asset.chainId,
      /** The token contract, or `native` for the chain's coin. */
      assetAddress: address.asset.address,
      decimals: address.asset.decimals,
      address: request.payee,
      amountDueRaw: dueRaw.toString(),
      // Exact, in the asset's units: copied into wallets as it is, never padded or grouped.
      amountDue: formatAmount(dueRaw, address.asset.decimals),
      paymentUri: request.uri,
    };
  }

  return {
    id: session.id,
    status: session.status,
    paymentStatus: session.paymentStatus,
    state,
    title,
    detail,
    currency,
    amountTotal: session.amountTotal,
    amountTotalFormatted: documentAmount(total),
    // All confirmed money, late money included (the API's amountReceived); the page's Paid rows read the split below.
    amountReceived: session.amountReceived,
    amountReceivedFormatted: documentAmount(received),
    amountReceivedBeforeClose: paid.beforeClose.toString(),
    amountReceivedBeforeCloseFormatted: documentAmount(paid.beforeClose),
    amountReceivedAfterClose: (paid.afterClose?.amount ?? 0n).toString(),
    amountReceivedAfterCloseFormatted: paid.afterClose ? amountOf(paid.afterClose, documentAmount) : documentAmount(0n),
    amountRemaining: remaining.toString(),
    amountRemainingFormatted: documentAmount(remaining),
    // A payment waited for again after a reorg is on its way too: Paid, Confirming and Remaining still make the total.
    amountPending: awaitedAmount.toString(),
    amountPendingFormatted: documentAmount(awaitedAmount),
    amountToSend: toSend.toString(),
    // What to send stays a plain exact figure (no grouping), like the request's own amountDue.
    amountToSendFormatted: formatAmount(toSend),
    amountLeftFormatted: documentAmount(toSend),
    confirmations: { pending: pending.length, current, required },
    expiresAt: session.expiresAt,
    now: new Date(now).toISOString(),
    payment,
    redirectUrl:
      session.status === 'complete' && session.afterCompletion === 'redirect' ? successRedirect(session) : null,
    returnUrl: returnUrl(session),
    message: session.status === 'complete' ? session.afterCompletionConfirmMsg : null,
  };
}

export type PayerStatus = ReturnType<typeof payerStatus>;

/** Where a finished page sends the payer back to: the success URL once paid, the cancel URL otherwise. */
function returnUrl(session: CheckoutSession): string | null {
  if (session.status === 'complete') {
    // A hosted confirmation's success URL points back at this very page.
    return session.afterCompletion === 'redirect' ? successRedirect(session) : null;
  }
  if (session.status === 'expired' || session.status === 'canceled') return session.cancelUrl;
  return null;
}
