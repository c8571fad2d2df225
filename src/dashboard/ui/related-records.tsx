import type { CheckoutSessionDoc } from '../../projections/collections.ts';
import { STATUS as SESSION_STATUSES } from '../pages/checkout-sessions/list.tsx';
import { Badge, Card, DateTime, EmptyState, money, ShortId, TableScroll, type Tone } from './components.tsx';

/** One of a record's related records (a customer's sessions, a link's): a link to its page (its number, else its short id), what it is for, its status. */
export type RelatedRow = {
  id: string;
  href: string;
  number?: string | null;
  what: string;
  status: { label: string; tone: Tone };
  createdAt: string;
};

/**
 * Records of one kind (a customer's, a payment link's), each leading to its page and its status named as there. Full
 * width: four columns did not fit half the page.
 */
export function Related(props: {
  title: string;
  id: string;
  noun: string;
  rows: RelatedRow[];
  /** The dashboard's zone, the times shown in it. */
  timeZone: string;
}): JSX.Element {
  return (
    <Card title={props.title} id={props.id}>
      {props.rows.length === 0 ? (
        <EmptyState message="None yet." />
      ) : (
        <TableScroll label={`${props.title}, each with its status`}>
          <table>
            <thead>
              <tr>
                <th safe>{props.noun}</th>
                <th class="amount">Amount</th>
                <th>Status</th>
                <th class="hide-narrow">Created</th>
              </tr>
            </thead>
            <tbody>
              {props.rows.map((r) => (
                <tr>
                  <td class="nowrap">
                    {r.number ? (
                      <a href={r.href} safe>
                        {r.number}
                      </a>
                    ) : (
                      <a href={r.href} aria-label={`${props.noun} ${r.id}`}>
                        <ShortId value={r.id} keep={8} />
                      </a>
                    )}
                  </td>
                  <td class="amount" safe>
                    {r.what}
                  </td>
                  <td>
                    <Badge tone={r.status.tone} label={r.status.label} />
                  </td>
                  <td class="hide-narrow nowrap">
                    <DateTime iso={r.createdAt} timeZone={props.timeZone} />
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

/** What a related session row needs of the API's session. */
export type RelatedSession = Pick<CheckoutSessionDoc, 'id' | 'status' | 'amountTotal' | 'currency' | 'createdAt'>;

/** Checkout sessions as related records (a customer's, a payment link's), each linking to its page. */
export const RelatedSessions = ({
  sessions,
  id,
  timeZone,
}: {
  sessions: RelatedSession[];
  id: string;
  timeZone: string;
}): JSX.Element => (
  <Related
    timeZone={timeZone}
    title="Checkout sessions"
    id={id}
    noun="Session"
    rows={sessions.map((s) => ({
      ...s,
      href: `/dashboard/checkout-sessions/${encodeURIComponent(s.id)}`,
      what: money(s.amountTotal, s.currency),
      status: { label: SESSION_STATUSES[s.status].text, tone: SESSION_STATUSES[s.status].tone },
    }))}
  />
);
