import type { Filter } from '../../../read-store/read-store.ts';
import { SESSION_STATUS_VALUES } from '../../../read-api/schema/checkout-session.ts';
import type { DashboardTenant } from '../../context.ts';
import {
  dateRangeErrors,
  dayRangeCondition,
  type ListQuery,
  pageOf,
  queryValue as one,
} from '../../ui/list-controls.tsx';
import { timeZoneOf } from '../../ui/time-zone-field.tsx';

export const PAGE_SIZE = 25;

export const PAYMENT_STATUSES = ['unpaid', 'paid'] as const;

export type SessionsQuery = {
  status: string;
  paymentStatus: string;
  from: string;
  to: string;
  /** The IANA zone whose days `from` / `to` name (the dashboard's when one given is unknown: its error says so). */
  timezone: string;
  q: string;
  page: number;
};
export type SessionsQueryErrors = Partial<Record<keyof SessionsQuery, string>>;

/**
 * The list's filters as typed, with a message per filter that cannot be used (shown at its field);
 * `zone` is `?timezone=` as the page read it (the dashboard's zone when absent: see time-zone-field.tsx).
 */
export function parseSessionsQuery(
  query: ListQuery,
  zone: { zone: string; error?: string } = timeZoneOf(query),
): { query: SessionsQuery; errors: SessionsQueryErrors } {
  const parsed: SessionsQuery = {
    status: one(query, 'status'),
    paymentStatus: one(query, 'paymentStatus'),
    from: one(query, 'from'),
    to: one(query, 'to'),
    timezone: zone.zone,
    q: one(query, 'q').slice(0, 200),
    page: pageOf(one(query, 'page')),
  };
  const errors: SessionsQueryErrors = dateRangeErrors(parsed);
  if (zone.error) errors.timezone = zone.error;
  if (parsed.status && !(SESSION_STATUS_VALUES as readonly string[]).includes(parsed.status))
    errors.status = `Pick a status: ${SESSION_STATUS_VALUES.join(', ')}.`;
  if (parsed.paymentStatus && !(PAYMENT_STATUSES as readonly string[]).includes(parsed.paymentStatus))
    errors.paymentStatus = 'Pick paid or unpaid.';
  return { query: parsed, errors };
}

/**
 * The filters the list applies: those with an error cleared, as `sessionsFilter` leaves them out (the zone
 * already holds the one used). Its refresh, pages and download follow these, not the refused ones (a
 * refresh of `?from=2026-02-31` was a 400 at every change of a session).
 */
export function appliedQuery(query: SessionsQuery, errors: SessionsQueryErrors): SessionsQuery {
  const applied = { ...query };
  for (const field of ['status', 'paymentStatus', 'from', 'to', 'q'] as const) if (errors[field]) applied[field] = '';
  return applied;
}

const escapeRegex = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The read-store filter of the list: the tenant's sessions, by status, payment status and creation
 * date (days of `timezone`, UTC by default; `to` included), and a search that matches the session id, the client reference or
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
  const range = dayRangeCondition(query, errors, query.timezone);
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
