import type { Filter } from '../../../read-store/read-store.ts';
import { parseIsoInstant } from '../../../read-api/pagination.ts';
import { SESSION_STATUS_VALUES } from '../../../read-api/schema/checkout-session.ts';
import type { DashboardTenant } from '../../context.ts';

export const PAGE_SIZE = 25;
const DAY_MS = 86_400_000;

export const PAYMENT_STATUSES = ['unpaid', 'paid'] as const;

export type SessionsQuery = {
  status: string;
  paymentStatus: string;
  from: string;
  to: string;
  q: string;
  page: number;
};
export type SessionsQueryErrors = Partial<Record<keyof SessionsQuery, string>>;

type Query = Record<string, string | string[] | undefined>;
const one = (query: Query, name: string): string => {
  const value = query[name];
  return (Array.isArray(value) ? value.at(-1) : value)?.trim() ?? '';
};

/** The list's filters as typed, with a message per filter that cannot be used (shown at its field). */
export function parseSessionsQuery(query: Query): { query: SessionsQuery; errors: SessionsQueryErrors } {
  const parsed: SessionsQuery = {
    status: one(query, 'status'),
    paymentStatus: one(query, 'paymentStatus'),
    from: one(query, 'from'),
    to: one(query, 'to'),
    q: one(query, 'q').slice(0, 200),
    page: /^[1-9][0-9]{0,5}$/.test(one(query, 'page')) ? Number(one(query, 'page')) : 1,
  };
  const errors: SessionsQueryErrors = {};
  if (parsed.status && !(SESSION_STATUS_VALUES as readonly string[]).includes(parsed.status))
    errors.status = `Pick a status: ${SESSION_STATUS_VALUES.join(', ')}.`;
  if (parsed.paymentStatus && !(PAYMENT_STATUSES as readonly string[]).includes(parsed.paymentStatus))
    errors.paymentStatus = 'Pick paid or unpaid.';
  for (const name of ['from', 'to'] as const)
    if (parsed[name] && (!/^\d{4}-\d{2}-\d{2}$/.test(parsed[name]) || Number.isNaN(parseIsoInstant(parsed[name]))))
      errors[name] = 'Enter a date as YYYY-MM-DD.';
  if (!errors.from && !errors.to && parsed.from && parsed.to && parsed.from > parsed.to)
    errors.to = 'The end date is before the start date.';
  return { query: parsed, errors };
}

const escapeRegex = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The read-store filter of the list: the tenant's sessions, by status, payment status and creation
 * date (UTC days, `to` included), and a search that matches the session id, the client reference or
 * the customer's email (whole, any case). Filters with an error are left out.
 */
export function sessionsFilter(
  tenant: DashboardTenant,
  query: SessionsQuery,
  errors: SessionsQueryErrors = {},
): Filter {
  const filter: Filter = { organizationId: tenant.organizationId, environment: tenant.environment };
  if (query.status && !errors.status) filter.status = query.status;
  if (query.paymentStatus && !errors.paymentStatus) filter.paymentStatus = query.paymentStatus;
  const range: Record<string, string> = {};
  if (query.from && !errors.from) range.$gte = new Date(parseIsoInstant(query.from)).toISOString();
  if (query.to && !errors.to) range.$lt = new Date(parseIsoInstant(query.to) + DAY_MS).toISOString();
  if (Object.keys(range).length) filter.createdAt = range;
  if (query.q) {
    filter.$or = [
      { _id: query.q },
      { clientReferenceId: query.q },
      { 'customerDetails.email': { $regex: `^${escapeRegex(query.q)}$`, $options: 'i' } },
    ];
  }
  return filter;
}

/** The sort of the API's list (newest first, the id breaking ties), so a page of the list is a page of the API. */
export const SESSIONS_SORT = { createdAt: -1, _id: 1 } as const;
