import { sendHtml } from '../../http.ts';
import { definePage } from '../../page.ts';
import { Card, DateTime, EmptyState, Field, ShortId, TableScroll } from '../../ui/components.tsx';
import { SelectField } from '../../ui/form-parts.tsx';
import { FilterForm, Pager } from '../../ui/list-controls.tsx';
import { AppLayout } from '../../ui/layout.tsx';
import { describeRecordType, describeType } from './changes.ts';
import { type AuditEntry, type AuditQuery, loadTrail, PAGE_SIZE, parseAuditQuery, RECORD_TYPES } from './trail.ts';

const PATH = '/dashboard/audit-trail';
const VISIBLE_ROWS = 6;

/** Where a record is shown in the dashboard, for the screens that show one by id. */
const recordLink = (recordType: string, recordId: string): string | null =>
  recordType === 'checkout_session' ? `/dashboard/checkout-sessions/${encodeURIComponent(recordId)}` : null;

const ACTOR_KIND: Record<AuditEntry['actorKind'], string> = {
  user: 'Dashboard user',
  api_key: 'API key',
  system: 'Weir',
  cli: 'Command line',
  payer: 'Payer',
  setup: 'First-run setup',
  other: 'Other',
};

/** The actor filter matches an actor exactly: each form the log writes (see `actorKindOf`). */
const ACTOR_HINT =
  'Exactly as the log names it: user:<id>, api_key:<id>, system:<part> (such as system:sweeper), cli, payer or setup. Select a name in the table to filter by it.';

function Who({ entry }: { entry: AuditEntry }): JSX.Element {
  return (
    <div class="who">
      <a href={`${PATH}?actor=${encodeURIComponent(entry.actor)}`} title="Only this actor's changes" safe>
        {entry.actorName ?? entry.actor}
      </a>
      <span class="muted small" safe>
        {entry.actorName ? `${ACTOR_KIND[entry.actorKind]} · ${entry.actor}` : ACTOR_KIND[entry.actorKind]}
      </span>
    </div>
  );
}

/** What an event changed, a row per field: an amount with its currency, and the integer the log holds. */
export function Changes({ entry }: { entry: Pick<AuditEntry, 'rows'> }): JSX.Element {
  if (entry.rows.length === 0) return <span class="muted">No fields</span>;
  const rows = (list: AuditEntry['rows']) => (
    <dl class="changes">
      {list.map((row) => (
        <div>
          <dt>
            <code safe>{row.path}</code>
          </dt>
          <dd>
            {row.before !== undefined ? (
              <>
                <del safe>{row.before}</del> <span aria-hidden="true">→</span>{' '}
                <span class="visually-hidden">changed to</span>
              </>
            ) : (
              ''
            )}
            <ins safe>{row.after}</ins>
            {row.raw !== undefined ? (
              <span class="raw muted small" safe>
                {`in the log: ${row.raw}`}
              </span>
            ) : (
              ''
            )}
          </dd>
        </div>
      ))}
    </dl>
  );
  if (entry.rows.length <= VISIBLE_ROWS + 2) return rows(entry.rows);
  return (
    <>
      {rows(entry.rows.slice(0, VISIBLE_ROWS))}
      <details>
        <summary safe>{`${entry.rows.length - VISIBLE_ROWS} more fields`}</summary>
        {rows(entry.rows.slice(VISIBLE_ROWS))}
      </details>
    </>
  );
}

function TrailTable({ entries, timeZone }: { entries: AuditEntry[]; timeZone: string }): JSX.Element {
  return (
    <TableScroll label="Audit trail entries, newest first">
      <table class="audit-table">
        <thead>
          <tr>
            <th>When</th>
            <th>Who</th>
            <th>What</th>
            <th>Changed</th>
          </tr>
        </thead>
        <tbody>
          {entries.map((entry) => {
            const link = recordLink(entry.recordType, entry.recordId);
            return (
              <tr>
                <td class="nowrap">
                  <DateTime iso={entry.occurredAt} timeZone={timeZone} />
                  <div class="muted small">
                    {entry.clientAddress ? (
                      <span safe>{`from ${entry.clientAddress}`}</span>
                    ) : (
                      <span>no client address</span>
                    )}
                  </div>
                </td>
                <td>
                  <Who entry={entry} />
                </td>
                <td>
                  <strong safe>{describeType(entry.type)}</strong>
                  <div class="muted small">
                    <span safe>{`${describeRecordType(entry.recordType)} `}</span>
                    {link ? (
                      <a href={link}>
                        <ShortId value={entry.recordId} keep={8} />
                      </a>
                    ) : (
                      <ShortId value={entry.recordId} keep={8} />
                    )}
                  </div>
                </td>
                <td>
                  <Changes entry={entry} />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </TableScroll>
  );
}

type Errors = Partial<Record<keyof AuditQuery, string>>;

function Filters({ query, errors }: { query: AuditQuery; errors: Errors }): JSX.Element {
  return (
    <FilterForm path={PATH} label="Filter the audit trail">
      <Field name="actor" label="Actor" value={query.actor} hint={ACTOR_HINT} error={errors.actor} />
      <SelectField
        name="recordType"
        label="Record type"
        value={query.recordType}
        error={errors.recordType}
        options={[
          { value: '', label: 'Any record' },
          ...RECORD_TYPES.map((t) => ({ value: t, label: describeRecordType(t) })),
        ]}
      />
      <Field name="recordId" label="Record id" value={query.recordId} error={errors.recordId} />
      <Field name="type" label="Event type" value={query.type} hint="e.g. CustomerUpdated" error={errors.type} />
      <Field name="from" label="From" type="date" value={query.from} error={errors.from} />
      <Field name="to" label="To" type="date" value={query.to} error={errors.to} />
      <SelectField
        name="system"
        label="Source"
        value={query.system}
        options={[
          { value: 'hide', label: 'People and API keys' },
          { value: 'show', label: 'Everything, Weir included' },
          { value: 'only', label: 'Weir only (matcher, timers…)' },
        ]}
      />
    </FilterForm>
  );
}

/**
 * The audit trail: every change to the tenant's records, newest first, with who made it (user, API
 * key, Weir itself), when, from which address and the fields it changed. Read from the event log
 * through its index (the audit_trail read model), filtered and paged.
 */
export const page = definePage({
  screen: 'auditTrail',
  routes(routes, deps) {
    routes.get(PATH, 'read', async (ctx) => {
      const { query, errors } = parseAuditQuery(ctx.query);
      const { entries, count } = await loadTrail(deps, ctx.state.tenant, query, errors, ctx.state.timeZone);
      const params: Record<string, string> = {
        actor: query.actor,
        recordType: query.recordType,
        recordId: query.recordId,
        type: query.type,
        from: query.from,
        to: query.to,
        system: query.system === 'hide' ? '' : query.system,
      };
      const bad = Object.keys(errors).length > 0;
      await sendHtml(
        ctx,
        <AppLayout ctx={ctx} title="Audit trail" screen="auditTrail">
          <Card id="audit-filters" class="filters-card">
            <Filters query={query} errors={errors} />
          </Card>
          <Card id="audit-trail">
            {entries.length === 0 ? (
              <EmptyState
                message="No change matches these filters."
                hint="Changes made in the dashboard or with an API key show here as they happen."
              />
            ) : (
              <TrailTable entries={entries} timeZone={ctx.state.timeZone} />
            )}
            <Pager path={PATH} params={params} page={query.page} pageSize={PAGE_SIZE} count={count} />
          </Card>
        </AppLayout>,
        bad ? 400 : 200,
      );
    });
  },
});
