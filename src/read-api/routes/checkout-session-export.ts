import { Readable } from 'node:stream';
import { paidAtClose } from '../../../machines/checkout-session.late.ts';
import type { CheckoutSessionDoc } from '../../projections/collections.ts';
import type { CustomerDoc } from '../../projections/customers.projection.ts';
import { shownSessionHash } from '../../projections/public-views.ts';
import type { Collection, Filter } from '../../read-store/read-store.ts';
import type { Clock } from '../../shared/clock.ts';
import { zonedDate } from '../../shared/time-zone.ts';
import type { ApiContext } from '../api-context.ts';
import { csvRow } from '../csv.ts';
import { boundsCondition, FROM_DESCRIPTION, fromToBounds, instantRange, TO_DESCRIPTION } from '../instant-range.ts';
import { dateBounds, type ListFilters, listFilter, queryValue, queryZone } from '../pagination.ts';
import { SESSION_LIST_FILTERS } from '../schema/checkout-session.ts';
import { listQuery, listTimeZoneQuery, queryFilter, withCode, z } from '../schema/fields.ts';

/** The list route's filters. */
const EXPORT_FILTERS: ListFilters = SESSION_LIST_FILTERS;

/**
 * The times `from` / `to` may select by: creation (the reference's, and the default: an export is
 * a listing of sessions) or completion (the volume report's, for money received in a period).
 */
const DATE_FIELDS = ['createdAt', 'completedAt'] as const;

/**
 * The export's query as the document shows it; `listFilter` and `fromTo` check it, in the order
 * they always did (list filters first, then `from` / `to`).
 */
export const ExportQuery = listQuery(
  {
    ids: queryFilter('Comma-separated session ids'),
    paymentLinkId: queryFilter("The payment link's sessions"),
    subscriptionId: queryFilter("The subscription's sessions"),
    invoiceId: queryFilter("The invoice's sessions"),
    customerId: queryFilter("The customer's sessions"),
    couponId: queryFilter('Sessions discounted with this coupon'),
    paymentMethodTypes: queryFilter('Comma-separated payment method types'),
    mode: queryFilter('payment or subscription'),
    status: queryFilter('open, complete, incomplete, expired or canceled'),
    paymentStatus: queryFilter('unpaid or paid'),
    dateField: z
      .enum(DATE_FIELDS, { error: withCode(`must be one of ${DATE_FIELDS.join(', ')}`) })
      .optional()
      .openapi({
        description:
          'The time `from` / `to` select by: `createdAt` (the default) lists the sessions created in the range; `completedAt` the sessions completed in it, as the volume report counts money received (a session created on 30 November and completed on 1 December is in November by creation, December by completion; one never completed is in no completion range). The rows stay newest created first, and the file is named for the time it selects by',
      }),
    timezone: listTimeZoneQuery(
      'The IANA time zone (`UTC` unless given) whose days a date alone in `from` / `to` names, daylight saving included, as the reports read it: `from=2026-11-30&to=2026-11-30&timezone=America/New_York` is all of 30 November in New York (05:00Z to 05:00Z the next day).',
    ),
    from: queryFilter(
      `The start of the range, by \`dateField\` (created at, unless said): ${FROM_DESCRIPTION} (its midnight in \`timezone\` when one is given)`,
    ),
    to: queryFilter(
      `The end of the range, by \`dateField\`: ${TO_DESCRIPTION} (that whole day in \`timezone\` when one is given)`,
    ),
  },
  // An export is the whole filtered set, as the reference's export and Weir's reports are: no page.
  { paged: false },
);

/** Sessions read from the store at a time: an export of any size holds at most this many. */
export const EXPORT_BATCH = 500;

/** Customer reads in flight at once: a batch's 500 distinct ids would otherwise be 500 MongoDB requests at once. */
export const CUSTOMER_READS = 16;

const COLUMNS = [
  'id',
  'createdAt',
  'status',
  'paymentStatus',
  'mode',
  'currency',
  'amountSubtotal',
  'amountDiscount',
  'amountTax',
  'amountGasFee',
  'amountTotal',
  'amountReceived',
  'amountOverpaid',
  'customerId',
  'customerEmail',
  'customerName',
  'clientReferenceId',
  'paymentLinkId',
  'invoiceId',
  'subscriptionId',
  'paymentIntentId',
  'paymentIntentStatus',
  'isMarkRefunded',
  'network',
  'asset',
  'transactionHash',
  'completedAt',
  'expiresAt',
  'metadata',
  // Last, so files read by position keep their columns.
  'amountReceivedAfterClose',
  'receivedAfterClose',
] as const;

/**
 * A row's customer columns: the name and email the session collected, else those of the customer it
 * is linked to (an invoice's, a subscription's, or `customerId` at creation), as the dashboard's list names it.
 */
function row(s: CheckoutSessionDoc, customer: CustomerDoc | undefined): string {
  const paid = s.payments.filter((p) => p.status === 'confirmed');
  const last = paid[paid.length - 1];
  const late = paidAtClose(s).afterClose;
  const cells: Record<(typeof COLUMNS)[number], string | boolean | null> = {
    id: s.id,
    createdAt: s.createdAt,
    status: s.status,
    paymentStatus: s.paymentStatus,
    mode: s.mode,
    currency: s.currency,
    amountSubtotal: s.amountSubtotal,
    amountDiscount: s.amountDetails.amountDiscount,
    amountTax: s.amountDetails.amountTax,
    amountGasFee: s.amountDetails.amountGasFee,
    amountTotal: s.amountTotal,
    amountReceived: s.amountReceived,
    amountOverpaid: s.amountOverpaid,
    customerId: s.customerId,
    customerEmail: s.customerDetails?.email || customer?.email || null,
    customerName: s.customerDetails?.name || customer?.name || null,
    clientReferenceId: s.clientReferenceId,
    paymentLinkId: s.paymentLinkId,
    invoiceId: s.invoiceId,
    subscriptionId: s.subscriptionId,
    paymentIntentId: s.paymentIntent.id,
    paymentIntentStatus: s.paymentIntent.status,
    isMarkRefunded: s.paymentIntent.isMarkRefunded ?? false,
    network: last?.network ?? null,
    asset: last?.asset.symbol ?? null,
    // As the API shows it: a Tron txID bare.
    transactionHash: shownSessionHash(s, s.transactionHash ?? last?.transactionHash ?? null),
    completedAt: s.completedAt,
    expiresAt: s.expiresAt,
    metadata: Object.keys(s.metadata ?? {}).length ? JSON.stringify(s.metadata) : null,
    // The part of amountReceived that came after the close, as the payer's page splits it (the rest
    // of amountReceived, so the two parts add up to it), and whether any came: late dust reads 0 with
    // true, where the page says "less than 0.00000001".
    amountReceivedAfterClose: (late?.amount ?? 0n).toString(),
    receivedAfterClose: late !== null,
  };
  return csvRow(COLUMNS.map((c) => cells[c]));
}

/**
 * The sessions the filter selects, newest first, a batch at a time. Each batch starts after the
 * last row of the one before (by creation time, then id), so sessions created while the export
 * runs neither shift nor repeat its rows.
 */
export async function* sessionRows(
  sessions: Collection<CheckoutSessionDoc>,
  customers: Collection<CustomerDoc>,
  filter: Filter,
): AsyncGenerator<string> {
  yield csvRow(COLUMNS);
  let after: { createdAt: string; id: string } | null = null;
  // Bounded: each turn moves strictly past the rows already written, and stops on a short batch.
  for (;;) {
    const past = after
      ? [{ createdAt: { $lt: after.createdAt } }, { createdAt: after.createdAt, _id: { $gt: after.id } }]
      : null;
    // A filter with its own `$or` (the dashboard's search) keeps it beside the paging's.
    const page: Filter = !past
      ? filter
      : filter.$or
        ? { ...filter, $and: [...((filter.$and as Filter[] | undefined) ?? []), { $or: past }] }
        : { ...filter, $or: past };
    const batch = await sessions.find(page, { sort: { createdAt: -1, _id: 1 }, limit: EXPORT_BATCH });
    const named = await customersOf(customers, batch);
    for (const session of batch) yield row(session, session.customerId ? named.get(session.customerId) : undefined);
    if (batch.length < EXPORT_BATCH) return;
    const last = batch[batch.length - 1]!;
    after = { createdAt: last.createdAt, id: last._id };
  }
}

/**
 * The customers a batch of sessions is linked to, each read once by its id (a query by many ids
 * would scan every tenant's customers on the embedded store) and kept only in its session's tenant.
 */
async function customersOf(
  customers: Collection<CustomerDoc>,
  batch: readonly CheckoutSessionDoc[],
): Promise<Map<string, CustomerDoc>> {
  const tenantOf = new Map<string, CheckoutSessionDoc>();
  for (const s of batch) if (s.customerId) tenantOf.set(s.customerId, s);
  const found = await mapBounded([...tenantOf.keys()], CUSTOMER_READS, (id) => customers.get(id));
  return new Map(
    found.flatMap((c) => {
      const session = c ? tenantOf.get(c.id) : undefined;
      return c && session && c.organizationId === session.organizationId && c.environment === session.environment
        ? [[c.id, c] as const]
        : [];
    }),
  );
}

/** `work` on each item, at most `limit` at a time; the results in the items' order. */
async function mapBounded<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/**
 * `GET /checkout/sessions/export`: the tenant's sessions as CSV, with the list route's filters.
 * Streamed, batch by batch from the read store, so a large export never sits in memory whole.
 */
export function exportCheckoutSessions(
  sessions: Collection<CheckoutSessionDoc>,
  customers: Collection<CustomerDoc>,
  clock: Clock,
) {
  return async (ctx: ApiContext): Promise<void> => {
    // Every parameter is checked before the first byte is sent: a bad one is still a 400.
    const filter = listFilter(ctx, { filters: EXPORT_FILTERS });
    // The zone the list's bounds were read in: `from` / `to` and the file's date are its days too.
    const zone = queryZone(ctx);
    const fromTo = { from: queryValue(ctx, 'from'), to: queryValue(ctx, 'to') };
    // Checked alone first: a bad or crossed from / to is named as such, before any clash with the list's bounds.
    instantRange(fromTo, zone);
    const dateField = DATE_FIELDS.find((f) => f === queryValue(ctx, 'dateField')) ?? 'createdAt';
    // With the list's own bounds on that field (only createdAt takes them): the tighter of each
    // kind holds, and a range they cross between them is a 400 naming both.
    const listed = dateField === 'createdAt' ? dateBounds(ctx, dateField) : [];
    const bounds = fromToBounds(fromTo);
    if (bounds.length) filter[dateField] = boundsCondition([...listed, ...bounds], zone);
    // Named for its basis when it is not the listing by creation (the name clients already save).
    sendSessionsCsv(
      ctx,
      { sessions, customers },
      filter,
      clock,
      zone,
      dateField === 'createdAt' ? '' : `-by-${dateField}`,
    );
  };
}

/**
 * Streams the sessions `filter` selects as the export's CSV file, dated by `clock` in `zone` (the
 * export's days): the API's route and the dashboard's Download CSV (its list's filters) both answer with it.
 */
export function sendSessionsCsv(
  ctx: { set(field: string, value: string): void; body: unknown },
  { sessions, customers }: { sessions: Collection<CheckoutSessionDoc>; customers: Collection<CustomerDoc> },
  filter: Filter,
  clock: Clock,
  zone: string,
  basis = '',
): void {
  const stamp = zonedDate(clock.now(), zone);
  ctx.set('Content-Type', 'text/csv; charset=utf-8');
  ctx.set('Content-Disposition', `attachment; filename="checkout-sessions${basis}-${stamp}.csv"`);
  ctx.set('Cache-Control', 'no-store');
  ctx.body = Readable.from(sessionRows(sessions, customers, filter));
}
