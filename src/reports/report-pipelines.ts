import type { Environment } from '../event-store/event-store.ts';
import { PRICES } from '../projections/catalog.projection.ts';
import { INVOICES } from '../projections/invoices.projection.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import { ValidationError } from '../shared/errors.ts';
import { API_DECIMALS } from '../shared/money.ts';
import { quotientHalfUp } from '../shared/decimal.ts';
import { periodKey, periodKeyStart, UTC, zonedDate, zonedPeriodStart } from '../shared/time-zone.ts';

/**
 * Analysts' reports as MongoDB aggregation pipelines over the read models, so the same report runs
 * on the embedded read store (mingo) and on MongoDB. Each pipeline starts with the tenant's
 * `$match`; money is summed exactly (below) and turned back into integer strings by `rowOf`.
 */

export const REPORT_NAMES = [
  'volume',
  'conversion',
  'time-to-pay',
  'payment-issues',
  'refunds',
  'subscriptions',
] as const;
export type ReportName = (typeof REPORT_NAMES)[number];
export const INTERVALS = ['day', 'week', 'month'] as const;
export const GROUPS = ['none', 'currency', 'network', 'product', 'paymentLink', 'status'] as const;
export type Group = (typeof GROUPS)[number];

export type ReportParams = {
  organizationId: string;
  environment: Environment;
  /** `all`: one row per group over the whole range (its period is `from`), for figures that do not add up across periods (percentiles). */
  interval: (typeof INTERVALS)[number] | 'all';
  groupBy: Group;
  /** The IANA zone whose midnights the periods start at (`UTC` unless given). */
  timeZone?: string;
  /** ISO bounds on the time each report counts by: `from` and `to` inclusive, `before` exclusive. */
  from?: string;
  to?: string;
  /** The midnight after a date-only `to` (the API's `to=2026-11-30` takes in that whole day). */
  before?: string;
  /** The time the report is run at: the subscriptions report shows its periods up to the one holding it. */
  now?: string;
};

type Stage = Record<string, unknown>;
type Expression = unknown;

/**
 * Amounts are integer strings of any length; summing them as numbers would round past 2^53 (90
 * million at the 10^8 scale). Each is split into groups of 8 digits from the right (`chunks` of them,
 * and the rest), each group summed as a number (exact for tens of millions of rows), and the groups
 * joined with bigint in `moneyOf`. Chain units of an 18-decimal token take 3 groups (24 digits) and the rest.
 */
const SPLIT = 8;
const length = (field: Expression): Expression => ({ $strLenCP: field });
/** The digits of `field` left of its last `8·k` digits: the next 8 of them, or all the rest when `rest`. */
const digitGroup = (field: string, k: number, rest: boolean): Expression => {
  const left = { $subtract: [length(field), SPLIT * k] };
  const start = rest ? 0 : { $max: [0, { $subtract: [left, SPLIT] }] };
  return {
    $toLong: { $cond: [{ $gt: [left, 0] }, { $substrCP: [field, start, { $subtract: [left, start] }] }, '0'] },
  };
};
const sumMoney = (name: string, field: string, chunks = 1): Stage =>
  Object.fromEntries(
    Array.from({ length: chunks + 1 }, (_, k) => [`${name}${k}`, { $sum: digitGroup(field, k, k === chunks) }]),
  );
const moneyBig = (row: Record<string, unknown>, name: string): bigint => {
  let total = 0n;
  for (let k = 0; `${name}${k}` in row; k++)
    total += BigInt(Number(row[`${name}${k}`] ?? 0)) * 10n ** BigInt(SPLIT * k);
  return total;
};
const moneyOf = (row: Record<string, unknown>, name: string): string => moneyBig(row, name).toString();

const zoned = (p: Pick<ReportParams, 'timeZone'>): string | null =>
  p.timeZone && p.timeZone !== UTC ? p.timeZone : null;

/**
 * The period holding `field`'s time: its start in UTC, or in another zone its name there (`periodKey`,
 * the same on MongoDB and the embedded store, whose `$dateTrunc` puts a zone's midnight at UTC's),
 * turned into its start by `periodIso`.
 */
const period = (field: string, p: Pick<ReportParams, 'interval' | 'timeZone'>): Expression => {
  if (p.interval === 'all') return null;
  const zone = zoned(p);
  return zone
    ? periodKey({ $toDate: field }, p.interval, zone)
    : { $dateTrunc: { date: { $toDate: field }, unit: p.interval, timezone: '+00:00', startOfWeek: 'monday' } };
};

/** A period as the pipeline gave it (a date, or a zone's period name) as the ISO instant it starts at. */
function periodIso(value: unknown, p: Pick<ReportParams, 'timeZone'>): string {
  const zone = zoned(p);
  if (zone && typeof value === 'string') {
    const start = periodKeyStart(value, zone);
    if (!Number.isNaN(start)) return new Date(start).toISOString();
  }
  return value instanceof Date ? value.toISOString() : new Date(String(value)).toISOString();
}

function within(field: string, p: ReportParams): Stage {
  const range: Record<string, string> = {};
  if (p.from) range.$gte = p.from;
  if (p.to) range.$lte = p.to;
  if (p.before) range.$lt = p.before;
  return Object.keys(range).length ? { [field]: range } : { [field]: { $ne: null } };
}

/**
 * Which confirmed payments a report counts: all of them (null), those confirmed by a time field of
 * the session, or those its mark of refunded covers. The mark's are told by the log's order
 * (`coveredByRefundMark`, set as the mark is folded): a payment confirmed in the mark's millisecond,
 * or on an instance with another clock, would tell no order or the wrong one by timestamps.
 */
type CountedBy = null | { confirmedBy: string } | 'refundMark';

/** A session's payments whose money a report counts: confirmed, never one still pending or withdrawn by a reorg. */
const countedPayments = (by: CountedBy): Expression => {
  const confirmed = { $eq: ['$$c.status', 'confirmed'] };
  const bound =
    by === null
      ? null
      : by === 'refundMark'
        ? { $eq: ['$$c.coveredByRefundMark', true] }
        : { $lte: ['$$c.confirmedAt', by.confirmedBy] };
  return {
    $filter: { input: { $ifNull: ['$payments', []] }, as: 'c', cond: bound ? { $and: [confirmed, bound] } : confirmed },
  };
};

/**
 * The network a session counts under: the one that brought most of its counted money (by the
 * payments' 10^-8 amounts, ties to the first detected), null if none counts. Its last payment's
 * would move the session to a transfer still pending or withdrawn by a reorg.
 */
const mainNetwork = (counted: Expression): Expression => {
  const networkTotal = (network: Expression): Expression => ({
    $reduce: {
      input: { $filter: { input: '$$counted', as: 'q', cond: { $eq: ['$$q.network', network] } } },
      initialValue: 0,
      in: { $add: ['$$value', capped('$$this.amount')] },
    },
  });
  return {
    $let: {
      vars: { counted },
      in: {
        $let: {
          vars: {
            best: {
              $reduce: {
                input: {
                  $map: {
                    input: '$$counted',
                    as: 'p',
                    in: { network: '$$p.network', total: networkTotal('$$p.network') },
                  },
                },
                initialValue: { network: null, total: -1 },
                in: { $cond: [{ $gt: ['$$this.total', '$$value.total'] }, '$$this', '$$value'] },
              },
            },
          },
          in: '$$best.network',
        },
      },
    },
  };
};

/**
 * The group key of a session for `groupBy`; `product` is a line sold's, after `soldLines`. By network,
 * its main network (above) over the payments `countedBy` counts, or all confirmed.
 */
function sessionGroup(groupBy: Group, countedBy: CountedBy = null): Expression {
  switch (groupBy) {
    case 'none':
      return null;
    case 'currency':
      return '$currency';
    case 'network':
      return mainNetwork(countedPayments(countedBy));
    case 'product':
      return '$sold.productId';
    case 'paymentLink':
      return '$paymentLinkId';
    case 'status':
      return '$status';
  }
}

/** `a < b` for two integer strings without leading zeros (their numbers may be past what a double holds). */
const below = (a: string, b: string): Expression => ({
  $or: [{ $lt: [length(a), length(b)] }, { $and: [{ $eq: [length(a), length(b)] }, { $lt: [a, b] }] }],
});

const tenant = (p: ReportParams): Stage => ({ organizationId: p.organizationId, environment: p.environment });
/** A session's key: `countedBy` bounds the payments its network is taken from (`sessionGroup`). */
const byPeriodAndGroup = (time: string, p: ReportParams, countedBy: CountedBy = null) => ({
  period: period(time, p),
  group: sessionGroup(p.groupBy, countedBy),
});
/** A money report's key: amounts of different currencies never add up, so each group has a row per currency. */
const byPeriodGroupAndCurrency = (time: string, p: ReportParams, countedBy: CountedBy = null) => ({
  ...byPeriodAndGroup(time, p, countedBy),
  currency: '$currency',
});
const sorted: Stage = { $sort: { '_id.period': 1, '_id.group': 1, '_id.currency': 1 } };

export type ReportDefinition = {
  collection: 'checkout_sessions' | 'transactions' | 'subscriptions';
  /** What the report counts by (for `from` / `to`), said in the API description. */
  time: string;
  /** Where a grouping counts by another time than `time`. */
  timeBy?: Partial<Record<Group, string>>;
  groups: readonly Group[];
  /** Each row's figures after `period` and `group`, in order (the CSV's columns). */
  figures: readonly string[];
  /** How a figure is worked out where its name does not say, in the API description. */
  about?: string;
  /** Its figures sum money: each row is of one `currency` within its group (a column after `group`). */
  perCurrency: boolean;
  pipeline(p: ReportParams): Stage[];
  /** Its pipeline answers cohorts that `rows` rolls up period by period, not a document per row. */
  cohorts?: true;
  /** The report's rows from the pipeline's (grouped, so few) documents. */
  rows(docs: Record<string, unknown>[], p: ReportParams): ReportRow[];
};

export type ReportRow = { period: string; group: string | null; currency?: string } & Record<
  string,
  string | number | null
>;

/**
 * The columns of a report's answer, in order: `period` (a UTC instant), `localDate` (the date that
 * period starts on in the report's time zone, which a CSV does not otherwise carry), `group`, then
 * `currency` in the reports that sum money, then its figures.
 */
export const reportColumns = (report: Pick<ReportDefinition, 'perCurrency' | 'figures'>): string[] => [
  'period',
  'localDate',
  'group',
  ...(report.perCurrency ? ['currency'] : []),
  ...report.figures,
];

/** Each row with its `localDate` beside `period`: the day its period starts on in `timeZone` (YYYY-MM-DD). */
export const withLocalDates = (rows: readonly ReportRow[], timeZone: string): ReportRow[] =>
  rows.map(({ period, ...rest }) => ({ period, localDate: zonedDate(Date.parse(period), timeZone), ...rest }));

/** One row per pipeline document. */
const each =
  (row: (doc: Record<string, unknown>, p: ReportParams) => ReportRow) =>
  (docs: Record<string, unknown>[], p: ReportParams): ReportRow[] =>
    docs.map((doc) => row(doc, p));

const periodOf = (doc: Record<string, unknown>, p: ReportParams): string => {
  const id = doc._id as { period?: unknown };
  const value = id?.period;
  if (value === null || value === undefined) return p.from ?? '';
  return periodIso(value, p);
};
const groupOf = (doc: Record<string, unknown>): string | null => {
  const group = (doc._id as { group?: unknown })?.group;
  return group === null || group === undefined ? null : String(group);
};
const base = (doc: Record<string, unknown>, p: ReportParams) => ({ period: periodOf(doc, p), group: groupOf(doc) });
/** A money report's row key: its period, group and currency. */
const moneyBase = (doc: Record<string, unknown>, p: ReportParams) => ({
  ...base(doc, p),
  currency: String((doc._id as { currency?: unknown }).currency),
});

/** The nearest-rank percentile of sorted values: the smallest with at least `p` of them at or below it. */
const nearestRank = (sorted: number[], p: number): number | null =>
  sorted.length === 0 ? null : sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)]!;

/**
 * The median of sorted whole numbers: the middle one, or for an even count the mean of the two
 * middle ones, rounded half up to a whole number (an analyst expects 4 and 10 to give 7, not 4).
 */
const median = (sorted: number[]): number | null => {
  if (sorted.length === 0) return null;
  const upper = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[upper]! : Math.round((sorted[upper - 1]! + sorted[upper]!) / 2);
};

/** A share as a decimal string with 4 places (0.5 → "0.5000"), exact from the two counts. */
const ratio = (part: number, whole: number): string | null => quotientHalfUp(part, whole, 4);

/**
 * What a payment received, exact: its chain units (`amountRaw`) brought to 36 decimals (the most an
 * asset has) by appending zeros, so payments of any asset sum exactly and a row's sum is cut to 10^8
 * once (`rows`): cut payment by payment, two DAI transfers of 1.500000005 and 1.499999995 would count
 * 2.99999999 where the session received 3. Exact for amounts below 10^35 of the currency.
 */
const ZERO = { $literal: '0' };
const EXACT_DECIMALS = 36;
const EXACT_CHUNKS = 7;
const exactUnits = (raw: Expression, decimals: Expression): Expression => ({
  $concat: [raw, { $substrCP: ['0'.repeat(EXACT_DECIMALS), 0, { $subtract: [EXACT_DECIMALS, decimals] }] }],
});
const cutToApi = (units: bigint): string => (units / 10n ** BigInt(EXACT_DECIMALS - API_DECIMALS)).toString();

/**
 * An amount of the session as a number for picking its main network: one past 15 digits (10 million
 * of the currency) is taken as 10^15 (a long could not hold it), enough to weigh networks by.
 */
const CAPPED = 1e15;
const capped = (field: Expression): Expression => ({
  $cond: [{ $gt: [length(field), 15] }, CAPPED, { $toLong: field }],
});
/**
 * A confirmed payment as volume counts it, with its share of its session's fee and gas fee as the
 * session recorded it when the payment was confirmed (`feeShare`): the first money confirmed pays
 * them, each payment up to its amount, the fee first, of what was owed then less what the payments
 * confirmed before it paid. Exact, fixed once the payment is confirmed (neither a later payment nor a
 * later change of the gas fee moves a closed period's), summing to the fees once enough was received
 * and never more than a payment brought (a session completed with less than its gas fee nets 0, not below).
 */
const paymentEntry: Expression = {
  at: '$$p.confirmedAt',
  network: '$$p.network',
  payments: { $literal: 1 },
  amount: exactUnits('$$p.amountRaw', '$$p.asset.decimals'),
  late: { $cond: [{ $eq: ['$$p.late', true] }, exactUnits('$$p.amountRaw', '$$p.asset.decimals'), '0'] },
  amountFee: { $ifNull: ['$$p.feeShare.fee', '0'] },
  amountGasFee: { $ifNull: ['$$p.feeShare.gasFee', '0'] },
  gasCost: ZERO,
};

/**
 * Volume counts money by when it was received: each confirmed payment at its `confirmedAt` (late
 * ones and overpayments too, so a closed period's figures never move), under the network it was
 * paid on, with its share of the session's fee and gas fee (above), whatever the session's status;
 * each sweep's gas at its `at`, under the network the sweep paid gas on. A session becomes one entry
 * per such event, each carrying only its own figures, and the range is matched on the entries' times.
 */
const volumeEntries = (sweeps: boolean): Stage[] => [
  {
    $project: {
      currency: 1,
      paymentLinkId: 1,
      entries: {
        $concatArrays: [
          { $map: { input: countedPayments(null), as: 'p', in: paymentEntry } },
          {
            $map: {
              // Sweep gas is in the network's coin: given by network only.
              input: sweeps ? { $ifNull: ['$sweeps', []] } : [],
              in: {
                at: '$$this.at',
                network: '$$this.network',
                payments: { $literal: 0 },
                amount: ZERO,
                late: ZERO,
                amountFee: ZERO,
                amountGasFee: ZERO,
                gasCost: '$$this.gasCost',
              },
            },
          },
        ],
      },
    },
  },
  { $unwind: '$entries' },
];

/** Sessions with something at a time in the range, kept before they are taken apart (no index holds these fields: the tenant's sessions are scanned). */
function touchedWithin(p: ReportParams): Stage {
  if (!p.from && !p.to && !p.before) return {};
  return { $or: [within('payments.confirmedAt', p), within('sweeps.at', p)] };
}

/**
 * What a complete session sold, a line each (`sold`, with its product): its line items, but for the
 * session that paid an invoice the invoice's lines, by their prices' products. That session sells one
 * line named for the invoice, a product of its own (one per session), so a catalog product billed on
 * invoices (a subscription's renewals) would show none of it. Another session of an invoice (one that
 * did not pay it) keeps its own line.
 */
const soldLines = (): Stage[] => [
  { $lookup: { from: INVOICES, localField: 'invoiceId', foreignField: '_id', as: 'invoice' } },
  {
    $project: {
      completedAt: 1,
      currency: 1,
      sold: {
        $let: {
          vars: { invoice: { $arrayElemAt: ['$invoice', 0] } },
          in: {
            $cond: [
              { $and: [{ $eq: ['$$invoice.status', 'paid'] }, { $eq: ['$$invoice.checkoutSessionId', '$_id'] }] },
              {
                $map: {
                  input: '$$invoice.lineItems.data',
                  as: 'l',
                  in: {
                    productId: null,
                    priceId: { $ifNull: ['$$l.priceId', null] },
                    amountTotal: '$$l.amountTotal',
                    amountDiscount: '0',
                  },
                },
              },
              {
                $map: {
                  input: '$lineItems.data',
                  as: 'l',
                  in: {
                    productId: '$$l.price.productId',
                    priceId: null,
                    amountTotal: '$$l.amountTotal',
                    amountDiscount: { $ifNull: ['$$l.amountDiscount', '0'] },
                  },
                },
              },
            ],
          },
        },
      },
    },
  },
  { $unwind: '$sold' },
  // An invoice's line names its price; the price its product (none for a line without a price: group null).
  { $lookup: { from: PRICES, localField: 'sold.priceId', foreignField: '_id', as: 'soldPrice' } },
  {
    $set: {
      'sold.productId': {
        $ifNull: ['$sold.productId', { $ifNull: [{ $arrayElemAt: ['$soldPrice.productId', 0] }, null] }],
      },
    },
  },
];

/** The volume report's `$group` over the entries (above), or by product over the lines complete sessions sold. */
function volumeGroup(p: ReportParams): Stage {
  if (p.groupBy === 'product')
    return {
      $group: {
        _id: byPeriodGroupAndCurrency('$completedAt', p),
        payments: { $sum: 1 },
        ...sumMoney('gross', '$sold.amountTotal'),
        ...sumMoney('discount', '$sold.amountDiscount'),
      },
    };
  return {
    $group: {
      _id: {
        period: period('$entries.at', p),
        group: p.groupBy === 'network' ? '$entries.network' : sessionGroup(p.groupBy),
        currency: '$currency',
      },
      payments: { $sum: '$entries.payments' },
      ...sumMoney('gross', '$entries.amount', EXACT_CHUNKS),
      ...sumMoney('late', '$entries.late', EXACT_CHUNKS),
      ...sumMoney('fee', '$entries.amountFee'),
      ...sumMoney('gas', '$entries.amountGasFee'),
      ...(p.groupBy === 'network' ? sumMoney('sweepGas', '$entries.gasCost') : {}),
    },
  };
}

/**
 * A refund marked is of what the session had received then: an entry for the session (counted
 * once) and one per payment confirmed when it was marked (`coveredByRefundMark`, by the log's order),
 * late ones included, in exact units as volume sums them. Its live `amountReceived` would take in money confirmed after the mark, moving
 * a closed period's figure and counting as refunded money the merchant kept.
 *
 * By network, each payment's amount counts under the network it was paid on (as in volume, so a
 * network's grossVolume less its amountRefunded is what was kept there), and the session under its
 * main network over the same payments (`sessionGroup`), as time-to-pay and payment-issues count it.
 */
const MARKED = '$paymentIntent.markRefundedAt';
const refundEntries = (p: ReportParams): Stage[] => [
  {
    $project: {
      key: byPeriodGroupAndCurrency(MARKED, p, 'refundMark'),
      entries: {
        $concatArrays: [
          [{ sessions: { $literal: 1 }, amount: ZERO }],
          {
            $map: {
              input: countedPayments('refundMark'),
              as: 'p',
              in: {
                sessions: { $literal: 0 },
                amount: exactUnits('$$p.amountRaw', '$$p.asset.decimals'),
                network: '$$p.network',
              },
            },
          },
        ],
      },
    },
  },
  { $unwind: '$entries' },
];

/**
 * The row key of a session's entries (`sessions: 1`) and of its payments' (the others): by network, a
 * payment's entry counts under the network it was paid on, the session's under its key's (its main
 * network); else every entry under the session's key.
 */
const entryKey = (p: ReportParams, perCurrency: boolean): Expression =>
  p.groupBy === 'network'
    ? {
        period: '$key.period',
        group: { $cond: [{ $eq: ['$entries.sessions', 1] }, '$key.group', '$entries.network'] },
        ...(perCurrency ? { currency: '$key.currency' } : {}),
      }
    : '$key';

/**
 * Payment issues: an entry for the session's own figures (underpaid, overpaid) and one per late
 * payment confirmed, carrying the network it was paid on, so by network a late payment counts where
 * it came (as volume and refunds count money), not under the session's main network.
 */
const issueEntries = (p: ReportParams): Stage[] => [
  {
    $project: {
      key: byPeriodAndGroup('$createdAt', p),
      entries: {
        $concatArrays: [
          [
            {
              sessions: { $literal: 1 },
              underpaid: {
                $cond: [{ $and: [{ $ne: ['$amountReceived', '0'] }, below('$amountReceived', '$amountTotal')] }, 1, 0],
              },
              // As underpaid, of the confirmed money against the total (gas fee included), whatever the
              // status: `amountOverpaid` is a completed session's only, so money past the total of one
              // that expired or was canceled would be neither.
              overpaid: { $cond: [below('$amountTotal', '$amountReceived'), 1, 0] },
              late: { $literal: 0 },
            },
          ],
          {
            $map: {
              input: { $filter: { input: countedPayments(null), as: 'l', cond: { $eq: ['$$l.late', true] } } },
              as: 'p',
              in: {
                sessions: { $literal: 0 },
                underpaid: { $literal: 0 },
                overpaid: { $literal: 0 },
                late: { $literal: 1 },
                network: '$$p.network',
              },
            },
          },
        ],
      },
    },
  },
  { $unwind: '$entries' },
];

/** Each of `input`'s spells as the periods it began (`from`) and ended (`to`, null while it lasts) in. */
const spells = (input: Expression, from: string, to: string, p: ReportParams): Expression => ({
  $map: {
    input,
    in: {
      from: period(from, p),
      to: { $cond: [{ $eq: [{ $ifNull: [to, null] }, null] }, null, period(to, p)] },
    },
  },
});

export const REPORTS: Record<ReportName, ReportDefinition> & Record<MoneyReportName, { perCurrency: true }> = {
  volume: {
    collection: 'checkout_sessions',
    time: 'payments.confirmedAt',
    timeBy: { product: 'completedAt' },
    groups: ['none', 'currency', 'network', 'product', 'paymentLink'],
    perCurrency: true,
    figures: ['payments', 'grossVolume', 'lateVolume', 'fees', 'gasFees', 'netVolume', 'operatorSweepGas'],
    about:
      'volume counts money when it was received: payments is the number of confirmed payments (a session paid in two transfers counts 2) and grossVolume their amounts, each at its confirmation time (payments.confirmedAt) whatever became of its session, so late payments (after the session expired or was canceled) and overpayments (after it completed) count in the period they were confirmed, a closed period’s figures never change, and grossVolume over a range is the sum of the confirmed incoming transactions (GET /transactions) confirmed in it (bounded by confirmedAt[gte] / confirmedAt[lte], day by day); each row sums its payments’ exact amounts in the asset’s own units and cuts the sum to the 10^-8 unit once (down), so a session’s payments add up to its amountReceived, not less by dust (an 18-decimal token’s transfer carries digits below 10^-8, so each transaction’s amount alone may be a unit under its share); a session completed as is counts the part it received; refunds marked later are in the refunds report, by their own time, so grossVolume less amountRefunded is what was kept; lateVolume is the part of grossVolume paid late (also counted in payment-issues); fees is always 0: Weir is non-custodial and charges no processing fee (the column sums the sessions’ amountFee, kept in the reference’s shape); gasFees is the network fee payers paid on top of the price when the organization adds it (paymentSetting.applyGasFee), 0 when it does not: the merchant pays no gas (Weir is non-custodial, the operator sweeps); a session’s fee and gas fee are counted with its payments, whatever became of the session: the first money confirmed pays them (in the order the payments were confirmed), each payment up to its amount, the fee first, of what was owed when it was confirmed less what the payments before it paid, so each payment’s share is fixed when it is confirmed: a gas fee that changes later (the payer switched asset after paying part) moves no closed period, its rise is paid by the money confirmed after; a session’s shares add up to its gas fee once it received that much, and no period’s netVolume is below 0; netVolume is grossVolume less fees and gasFees; by network, each payment counts under the network it was paid on, with its share of the fees; by product, the report counts what was sold instead: grossVolume is the line items’ totals less each line’s share of its session’s discount (amountDiscount), of the sessions completed in the period, and payments the number of those line items, both by completedAt (dateField completedAt; a session’s payment is not split between its lines; the session that paid an invoice counts the invoice’s lines, each under its price’s product, null for a line with no price, not the one line named for the invoice it sells), lateVolume, fees, gasFees and netVolume null; operatorSweepGas, grouped by network only (else null, as coins do not add up), is the gas the operator’s sweeper account paid to sweep deposits, each sweep at its own time under the network it was made on (reverted sweeps included, each session’s share of a batch), in the smallest unit of the network’s own coin (wei on EVM networks, sun on Tron), not in the currency; on Tron it is the TRX burnt, not what renting energy for the sweep cost (in each sweep’s tron.rentalCost)',
    // By product, what was sold: a complete session's line items' totals at its completion (what was
    // received is the session's, not split between lines); fees and gas are the session's, so null there.
    pipeline: (p) =>
      p.groupBy === 'product'
        ? [
            { $match: { ...tenant(p), status: 'complete', ...within('completedAt', p) } },
            ...soldLines(),
            volumeGroup(p),
            sorted,
          ]
        : [
            { $match: { ...tenant(p), ...touchedWithin(p) } },
            ...volumeEntries(p.groupBy === 'network'),
            { $match: within('entries.at', p) },
            volumeGroup(p),
            sorted,
          ],
    rows: (docs, p) =>
      docs.map((doc) => {
        const operatorSweepGas = p.groupBy === 'network' ? moneyOf(doc, 'sweepGas') : null;
        if (p.groupBy === 'product')
          return {
            ...moneyBase(doc, p),
            payments: Number(doc.payments),
            // What was sold: the lines' totals less their shares of their sessions' discounts.
            grossVolume: (moneyBig(doc, 'gross') - moneyBig(doc, 'discount')).toString(),
            lateVolume: null,
            fees: null,
            gasFees: null,
            netVolume: null,
            operatorSweepGas,
          };
        const received = cutToApi(moneyBig(doc, 'gross'));
        const fee = moneyOf(doc, 'fee');
        const gas = moneyOf(doc, 'gas');
        return {
          ...moneyBase(doc, p),
          payments: Number(doc.payments),
          grossVolume: received,
          lateVolume: cutToApi(moneyBig(doc, 'late')),
          fees: fee,
          gasFees: gas,
          netVolume: (BigInt(received) - BigInt(fee) - BigInt(gas)).toString(),
          operatorSweepGas,
        };
      }),
  },
  conversion: {
    collection: 'checkout_sessions',
    time: 'createdAt',
    perCurrency: false,
    groups: ['none', 'currency', 'paymentLink'],
    figures: ['created', 'completed', 'conversionRate'],
    about:
      'created counts the sessions created in the period, completed those of them complete now (completed as is included); conversionRate is completed ÷ created to 4 decimals, rounded half up exactly (a string: 3 of 160 is 0.0188)',
    pipeline: (p) => [
      { $match: { ...tenant(p), ...within('createdAt', p) } },
      {
        $group: {
          _id: byPeriodAndGroup('$createdAt', p),
          created: { $sum: 1 },
          completed: { $sum: { $cond: [{ $eq: ['$status', 'complete'] }, 1, 0] } },
        },
      },
      sorted,
    ],
    rows: each((doc, p) => ({
      ...base(doc, p),
      created: Number(doc.created),
      completed: Number(doc.completed),
      conversionRate: ratio(Number(doc.completed), Number(doc.created)),
    })),
  },
  'time-to-pay': {
    collection: 'checkout_sessions',
    time: 'completedAt',
    perCurrency: false,
    groups: ['none', 'currency', 'network', 'paymentLink'],
    figures: ['payments', 'medianSeconds', 'p95Seconds'],
    about:
      'times are whole milliseconds from creation to completion; medianSeconds is the middle time, or for an even count the mean of the two middle ones rounded half up to the millisecond; p95Seconds is the nearest rank, the shortest time that at least 95% of payments took no longer than (always a real payment’s time); by network, each session counts once, under the network that brought most of the money it had received when completed (its payments confirmed by completedAt, by their amounts, ties to the one detected first), never the network of a payment still pending, withdrawn by a reorg or confirmed after completion',
    pipeline: (p) => [
      { $match: { ...tenant(p), status: 'complete', ...within('completedAt', p) } },
      {
        $project: {
          completedAt: 1,
          currency: 1,
          payments: 1,
          paymentLinkId: 1,
          ms: { $subtract: [{ $toDate: '$completedAt' }, { $toDate: '$createdAt' }] },
        },
      },
      {
        $group: {
          // By network, the money received by completion: a transfer after it never moves the session.
          _id: byPeriodAndGroup('$completedAt', p, { confirmedBy: '$completedAt' }),
          payments: { $sum: 1 },
          // The median and p95 are taken in `rows` from each group's times: `$median` and
          // `$percentile` approximate, and answer differently on mingo and on MongoDB for small groups.
          ms: { $push: '$ms' },
        },
      },
      sorted,
    ],
    rows: each((doc, p) => {
      const ms = ((doc.ms as number[] | undefined) ?? []).map(Number).sort((a, b) => a - b);
      const seconds = (value: number | null) => (value === null ? null : value / 1000);
      return {
        ...base(doc, p),
        payments: Number(doc.payments),
        medianSeconds: seconds(median(ms)),
        p95Seconds: seconds(nearestRank(ms, 0.95)),
      };
    }),
  },
  'payment-issues': {
    collection: 'checkout_sessions',
    time: 'createdAt',
    perCurrency: false,
    // By status: which of the short sessions still wait for the rest, were completed as is, or ended.
    groups: ['none', 'currency', 'network', 'paymentLink', 'status'],
    figures: ['underpaidSessions', 'latePayments', 'overpaidSessions'],
    about:
      'underpaidSessions counts the sessions whose confirmed money (amountReceived) is more than 0 and less than their amountTotal, whatever their status: partly paid and waiting for the rest (incomplete), completed as is for the part received, or expired or canceled with a late payment short of the total; a session paid in full, even late, is not underpaid, nor one whose payments are still unconfirmed or were all withdrawn by a reorg (nothing received yet); latePayments counts the payments confirmed after their session ended (expired or canceled, or completed as is), not one a reorg withdrew; overpaidSessions the sessions whose amountReceived is more than their amountTotal (its gas fee included), whatever their status: overpaid after completing, or expired or canceled and then paid more than the total late; by network, each session counts once in underpaidSessions and overpaidSessions, under the network that brought most of its confirmed money (by the payments’ amounts, ties to the one detected first), never the network of a payment still pending or withdrawn by a reorg, and a session with no confirmed payment has no network (group null); each late payment counts in latePayments under the network it was paid on (as volume and refunds count money), so a network that brought only a session’s late payment shows it with 0 sessions',
    pipeline: (p) => [
      { $match: { ...tenant(p), ...within('createdAt', p) } },
      ...issueEntries(p),
      {
        $group: {
          _id: entryKey(p, false),
          underpaid: { $sum: '$entries.underpaid' },
          latePayments: { $sum: '$entries.late' },
          overpaid: { $sum: '$entries.overpaid' },
        },
      },
      sorted,
    ],
    rows: each((doc, p) => ({
      ...base(doc, p),
      underpaidSessions: Number(doc.underpaid),
      latePayments: Number(doc.latePayments),
      overpaidSessions: Number(doc.overpaid),
    })),
  },
  refunds: {
    collection: 'checkout_sessions',
    time: 'paymentIntent.markRefundedAt',
    perCurrency: true,
    groups: ['none', 'currency', 'network', 'paymentLink'],
    figures: ['refundsMarked', 'amountRefunded'],
    about:
      'refundsMarked counts the sessions marked refunded (POST /payment-intents/{id}/mark-as-refund) in the period; amountRefunded is what they had received when marked: their payments confirmed before the mark in the order events were recorded (not by timestamps, so one confirmed in the mark’s millisecond or on a server with another clock is placed right), late ones included, summed exactly and cut to the 10^-8 unit once, as volume sums them; money a session receives after it was marked is not counted (the merchant refunded what it had), so a closed period’s figures never change and grossVolume less amountRefunded is what was kept; by network, each payment counted is under the network it was paid on (amountRefunded splits as the money came, so a network’s grossVolume less its amountRefunded is what was kept there) and each session is counted once in refundsMarked, under the network that brought most of its counted money (by the payments’ amounts, ties to the one detected first; a network that brought only the smaller part shows its amount with 0 refunds); a payment still pending, withdrawn by a reorg or confirmed after the mark gives no network',
    pipeline: (p) => [
      { $match: { ...tenant(p), 'paymentIntent.isMarkRefunded': true, ...within('paymentIntent.markRefundedAt', p) } },
      ...refundEntries(p),
      {
        $group: {
          _id: entryKey(p, true),
          refunds: { $sum: '$entries.sessions' },
          ...sumMoney('refunded', '$entries.amount', EXACT_CHUNKS),
        },
      },
      sorted,
    ],
    rows: each((doc, p) => ({
      ...moneyBase(doc, p),
      refundsMarked: Number(doc.refunds),
      amountRefunded: cutToApi(moneyBig(doc, 'refunded')),
    })),
  },
  subscriptions: {
    collection: 'subscriptions',
    time: 'startedAt',
    perCurrency: true,
    groups: ['none', 'currency'],
    figures: ['newSubscriptions', 'churned', 'pastDue', 'activeAtEnd', 'mrr'],
    about:
      'a subscription counts from when its first bill was paid (startedAt): one never paid, ended while incomplete or while trialing before its first charge, is in no figure, and a trial brings no MRR until it is paid; newSubscriptions counts those started in the period, churned those of them that ended in it; pastDue counts the subscriptions that went past due in the period (a renewal unpaid past its due time), whatever became of them after, so a closed period keeps it; activeAtEnd and mrr count the subscriptions started by the period’s end and neither ended, paused nor unpaid then: a paused subscription brings no MRR while paused, nor an unpaid one (marked unpaid once past due too long) until its bill is paid, voided or deleted, as is usual for MRR (one past due and not yet unpaid still counts; one paused and resumed, or unpaid and paid, within a period is active at its end); unlike the other reports, a period with nothing begun, ended or paused in it still has its row (each period from the first subscription’s to `to`, never past now, for every currency with a subscription begun by its end and not ended before it began), so MRR has no gaps',
    cohorts: true,
    // Cohorts: subscriptions that started (were paid for) in one period and ended in another (or
    // not yet), by price cadence; the rows roll them up period by period.
    pipeline: (p) => [
      { $match: { ...tenant(p), startedAt: { $ne: null } } },
      {
        $group: {
          _id: {
            started: period('$startedAt', p),
            ended: { $cond: [{ $eq: [{ $ifNull: ['$endedAt', null] }, null] }, null, period('$endedAt', p)] },
            // The periods it went past due in.
            pastDue: { $map: { input: { $ifNull: ['$pastDues', []] }, in: period('$$this.since', p) } },
            // Each spell without MRR (a pause, or unpaid) as the periods it began and ended in (null while it lasts).
            inactive: {
              $concatArrays: [
                spells({ $ifNull: ['$pauses', []] }, '$$this.pausedAt', '$$this.resumedAt', p),
                spells(
                  {
                    $filter: {
                      input: { $ifNull: ['$pastDues', []] },
                      as: 's',
                      cond: { $ne: [{ $ifNull: ['$$s.unpaidAt', null] }, null] },
                    },
                  },
                  '$$this.unpaidAt',
                  '$$this.until',
                  p,
                ),
              ],
            },
            group: p.groupBy === 'currency' ? '$currency' : null,
            currency: '$currency',
            interval: '$interval',
            intervalCount: '$intervalCount',
          },
          subscriptions: { $sum: 1 },
          ...sumMoney('amount', '$amountTotal'),
        },
      },
    ],
    rows: subscriptionRows,
  },
};

/** The time a report counts by for a grouping (its `dateField`). */
export const reportTime = (name: ReportName, groupBy: Group): string =>
  REPORTS[name].timeBy?.[groupBy] ?? REPORTS[name].time;

/**
 * The most rows a report answers. Rows are periods × groups × currencies, so a day-by-day report
 * over years, by payment link, has no bound of its own: past this it is a 400 naming the limit.
 */
export const MAX_REPORT_ROWS = 10_000;

/** The reports whose figures sum money (`perCurrency`): each of their rows is of one currency, always named. */
export type MoneyReportName = 'volume' | 'refunds' | 'subscriptions';
export type MoneyReportRow = ReportRow & { currency: string };

/** A report's rows for one tenant: the one way the API, its exports and the dashboard run it. */
export function runReport(
  readStore: ReadStore,
  name: MoneyReportName,
  params: ReportParams,
  options?: { maxRows?: number },
): Promise<MoneyReportRow[]>;
export function runReport(
  readStore: ReadStore,
  name: ReportName,
  params: ReportParams,
  options?: { maxRows?: number },
): Promise<ReportRow[]>;
export async function runReport(
  readStore: ReadStore,
  name: ReportName,
  params: ReportParams,
  { maxRows = MAX_REPORT_ROWS }: { maxRows?: number } = {},
): Promise<ReportRow[]> {
  const report = REPORTS[name];
  const pipeline = report.pipeline(params);
  // A document per row: the store sends one past the limit at most, enough to know it is passed.
  const capped = report.cohorts ? pipeline : [...pipeline, { $limit: maxRows + 1 }];
  const rows = report.rows(await readStore.collection(report.collection).aggregate(capped), params);
  if (rows.length > maxRows)
    throw new ValidationError(
      null,
      `the ${name} report has more than ${maxRows} rows (periods × groups × currencies), the most a report answers: narrow from / to, take a longer interval or a coarser groupBy`,
      'report_too_large',
    );
  return rows;
}

/** A month's worth of one billing cycle, as a fraction: a yearly price counts a twelfth, a weekly one 52/12. */
const MONTHLY: Record<string, [bigint, bigint]> = {
  day: [365n, 12n],
  week: [52n, 12n],
  month: [1n, 1n],
  year: [1n, 12n],
};

const isoOf = (value: unknown): string | null =>
  value === null || value === undefined
    ? null
    : (value instanceof Date ? value : new Date(String(value))).toISOString();

/**
 * The start of the period (in the report's zone, weeks from Monday) that holds `at`, as the
 * pipelines' `$dateTrunc` gives it: a range from mid-period still shows that period, as the other reports do.
 */
function periodStart(at: string, p: Pick<ReportParams, 'interval' | 'timeZone'>): string {
  const time = Date.parse(at);
  if (p.interval === 'all') return new Date(time).toISOString();
  return new Date(zonedPeriodStart(time, p.interval, p.timeZone ?? UTC)).toISOString();
}

/** The first instant of the period after the one starting at `start` (a day is 23 to 25 hours long, a month 28 to 31 days). */
const nextPeriod = (start: number, p: ReportParams & { interval: 'day' | 'week' | 'month' }): number =>
  zonedPeriodStart(
    start + { day: 26, week: 7 * 24 + 2, month: 32 * 24 }[p.interval] * 3_600_000,
    p.interval,
    p.timeZone ?? UTC,
  );

/**
 * The periods with no subscription event between the first event and the end of the range (its
 * `to`, but not past `now`; the last event's period without either): subscriptions active through
 * them bring MRR there too, so a quiet month still has its row, not a gap a chart would fill with 0.
 */
function quietPeriods(events: string[], p: ReportParams): string[] {
  if (p.interval === 'all' || events.length === 0) return [];
  const ends = [p.to, p.before ? new Date(Date.parse(p.before) - 1).toISOString() : undefined, p.now].filter(
    (at): at is string => at !== undefined,
  );
  const last = Date.parse(
    ends.length > 0
      ? periodStart(
          ends.reduce((a, b) => (a < b ? a : b)),
          p,
        )
      : events.reduce((a, b) => (a > b ? a : b)),
  );
  const first = Math.max(
    Date.parse(events.reduce((a, b) => (a < b ? a : b))),
    p.from ? Date.parse(periodStart(p.from, p)) : Number.NEGATIVE_INFINITY,
  );
  const periods: string[] = [];
  // Past the most rows a report answers it is refused anyway (a range of centuries by day).
  for (
    let at = first;
    at <= last && periods.length <= MAX_REPORT_ROWS;
    at = nextPeriod(at, { ...p, interval: p.interval })
  )
    periods.push(new Date(at).toISOString());
  return periods;
}

/**
 * New, churned and past-due subscriptions per period, and the monthly recurring revenue at the end
 * of each: every subscription started by then and neither ended, paused nor unpaid then, its amount
 * brought to a month (rounded down to the base unit). Only the periods that `from` / `to` reach into
 * are shown (a range starting mid-period shows that whole period's figures).
 */
function subscriptionRows(docs: Record<string, unknown>[], p: ReportParams): ReportRow[] {
  type Spell = { from: string; to: string | null };
  type Cohort = {
    started: string;
    ended: string | null;
    pastDue: Set<string>;
    inactive: Spell[];
    group: string | null;
    currency: string;
    count: number;
    monthly: bigint;
  };
  const periodOfCohort = (value: unknown): string | null =>
    value === null || value === undefined ? null : periodIso(value, p);
  const cohorts: Cohort[] = docs.map((doc) => {
    const id = doc._id as Record<string, unknown>;
    const [num, den] = MONTHLY[String(id.interval)] ?? [1n, 1n];
    const amount = BigInt(moneyOf(doc, 'amount'));
    return {
      started: periodOfCohort(id.started)!,
      ended: periodOfCohort(id.ended),
      pastDue: new Set(((id.pastDue as unknown[] | undefined) ?? []).map((at) => periodOfCohort(at)!)),
      inactive: ((id.inactive as { from: unknown; to: unknown }[] | undefined) ?? []).map((spell) => ({
        from: periodOfCohort(spell.from)!,
        to: periodOfCohort(spell.to),
      })),
      group: id.group === null || id.group === undefined ? null : String(id.group),
      currency: String(id.currency),
      count: Number(doc.subscriptions),
      monthly: (amount * num) / (den * BigInt(Number(id.intervalCount) || 1)),
    };
  });
  const events = cohorts.flatMap((c) => [
    c.started,
    ...(c.ended ? [c.ended] : []),
    ...c.pastDue,
    ...c.inactive.flatMap((spell) => [spell.from, ...(spell.to ? [spell.to] : [])]),
  ]);
  const periods = [...new Set([...events, ...quietPeriods(events, p)])]
    .filter(
      (at) =>
        (!p.from || at >= periodStart(p.from, p)) &&
        (!p.to || at <= isoOf(p.to)!) &&
        (!p.before || at < isoOf(p.before)!),
    )
    .sort();
  // Each group's rows per currency: amounts of different currencies never add up.
  const keys = [...new Map(cohorts.map((c) => [`${c.group ?? ''}\u0000${c.currency}`, c])).entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, c]) => ({ group: c.group, currency: c.currency }));
  const rows: ReportRow[] = [];
  for (const at of periods)
    for (const { group, currency } of keys) {
      const mine = cohorts.filter((c) => c.group === group && c.currency === currency);
      // A currency none of whose subscriptions had begun by then, or all had ended before, has nothing in the period.
      if (!mine.some((c) => c.started <= at && (c.ended === null || c.ended >= at))) continue;
      const sum = (pick: (c: Cohort) => number) => mine.reduce((n, c) => n + pick(c), 0);
      // Paused or unpaid at the period's end: no MRR then.
      const inactiveAt = (c: Cohort) =>
        c.inactive.some((spell) => spell.from <= at && (spell.to === null || spell.to > at));
      const active = mine.filter((c) => c.started <= at && (c.ended === null || c.ended > at) && !inactiveAt(c));
      rows.push({
        period: at,
        group,
        currency,
        newSubscriptions: sum((c) => (c.started === at ? c.count : 0)),
        churned: sum((c) => (c.ended === at ? c.count : 0)),
        pastDue: sum((c) => (c.pastDue.has(at) ? c.count : 0)),
        activeAtEnd: active.reduce((n, c) => n + c.count, 0),
        mrr: active.reduce((n, c) => n + c.monthly, 0n).toString(),
      });
    }
  return rows;
}
