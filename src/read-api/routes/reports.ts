import { Readable } from 'node:stream';
import Router from '@koa/router';
import {
  AnalyticsQueryError,
  APPROXIMATE_OPERATORS,
  MAX_ANSWER_DEPTH,
  MAX_RESULTS,
  MAX_STAGES,
  QUERYABLE_COLLECTIONS,
  safePipeline,
  inexactMessage,
  inexactNumberIn,
  nestsTooDeep,
  plainNumbers,
} from '../../reports/analytics-query.ts';
import {
  GROUPS,
  INTERVALS,
  MAX_REPORT_ROWS,
  REPORT_NAMES,
  REPORTS,
  reportColumns,
  reportTime,
  runReport,
  withLocalDates,
  type ReportName,
  type ReportRow,
} from '../../reports/report-pipelines.ts';
import { PipelineTimeoutError } from '../../read-store/run-pipeline.ts';
import { ValidationError, WeirError } from '../../shared/errors.ts';
import { UTC } from '../../shared/time-zone.ts';
import type { ApiDeps, ApiState } from '../api-context.ts';
import { csvRow } from '../csv.ts';
import { FROM_DESCRIPTION, instantRange, parseIsoInstant, TO_DESCRIPTION } from '../instant-range.ts';
import {
  arrayOf,
  bodyObject,
  invalidFields,
  required,
  requiredOneOf,
  timeZoneQuery,
  withCode,
  z,
} from '../schema/fields.ts';
import { schemaRoutes } from '../schema/route.ts';

const FORMATS = ['json', 'csv', 'ndjson'] as const;

const ReportParams = z.object({ name: z.enum(REPORT_NAMES) });

/** A report name is a path: one that does not exist is a 404, as any path that does not exist is. */
const isReportName = (name: unknown): name is (typeof REPORT_NAMES)[number] =>
  (REPORT_NAMES as readonly unknown[]).includes(name);

const notGrouped = (name: ReportName): ValidationError =>
  new ValidationError('groupBy', `the ${name} report groups by ${REPORTS[name].groups.join(', ')}`);

const instant = (description: string) =>
  z
    .string()
    .optional()
    .refine(
      (v) => v === undefined || v === '' || !Number.isNaN(parseIsoInstant(v)),
      withCode('must be an ISO 8601 date or timestamp'),
    )
    .openapi({ description });

const ReportQuery = z.object({
  interval: z
    .enum(INTERVALS, { error: withCode(`must be one of ${INTERVALS.join(', ')}`) })
    .default('month')
    .openapi({ description: 'The period each row covers (weeks start on Monday), in `timezone`' }),
  timezone: timeZoneQuery(
    'The IANA time zone whose days, weeks and months the periods are (`UTC` unless given), daylight saving included: a period starts at a midnight there (shown as its UTC instant, `2026-03-01T05:00:00.000Z` for 1 March in New York), and a date alone in `from` / `to` is that whole day there; a timestamp stays exact (UTC when it has no offset)',
  ),
  groupBy: z
    .enum(GROUPS, { error: withCode(`must be one of ${GROUPS.join(', ')}`) })
    .default('none')
    .openapi({
      description:
        'A second key of each row; each report says which it takes. The reports that sum money also key each row by its currency',
    }),
  from: instant(
    `The start of the range, by the time the report counts by (its \`dateField\`): ${FROM_DESCRIPTION} (its midnight in \`timezone\` when one is given)`,
  ),
  to: instant(`The end of the range: ${TO_DESCRIPTION} (that whole day in \`timezone\` when one is given)`),
  format: z
    .enum(FORMATS, { error: withCode(`must be one of ${FORMATS.join(', ')}`) })
    .default('json')
    .openapi({ description: '`json` (a list), `csv` or `ndjson` (streamed, one row per line)' }),
});

const ReportRowSchema = z
  .object({
    period: z.string().openapi({
      description: 'The instant the period starts at, in UTC (a midnight in `timezone`)',
    }),
    localDate: z.string().openapi({
      description:
        'The date the period starts on in `timezone` (YYYY-MM-DD), beside `period`: `2026-03-01` for a `period` of `2026-03-01T05:00:00.000Z` in `America/New_York`',
    }),
    group: z.string().nullable(),
    currency: z.string().optional().openapi({
      description:
        "The currency of the row's amounts, in the reports that sum money (volume, refunds, subscriptions): amounts of different currencies are never added, so each period and group has a row per currency",
    }),
  })
  .catchall(z.union([z.string(), z.number(), z.null()]))
  .openapi('ReportRow');

const ReportSchema = z
  .object({
    object: z.literal('report'),
    name: z.enum(REPORT_NAMES),
    interval: z.enum(INTERVALS),
    groupBy: z.enum(GROUPS),
    timezone: z.string().openapi({ description: 'The time zone the periods are of' }),
    dateField: z.string().openapi({
      description: `The time the report counts each record by, which \`from\`, \`to\` and \`period\` are of: ${REPORT_NAMES.map((name) => `\`${REPORTS[name].time}\` for ${name}`).join(', ')}, but \`completedAt\` for volume by product (volume counts money when it was received, so by each payment's confirmation; by product it counts what complete sessions sold, by their completion; an export of sessions lists them by creation unless asked). The subscriptions report places each figure at its own time: newSubscriptions by \`startedAt\` (its first bill paid), churned by \`endedAt\`, pastDue by when each went past due, activeAtEnd and mrr at the period's end`,
    }),
    columns: z.array(z.string()).openapi({
      description:
        "Each row's fields in order, the CSV's header: `period`, `localDate`, `group`, `currency` in the reports that sum money, then the report's figures",
    }),
    data: z.array(ReportRowSchema).openapi({
      description:
        'A row per period, group and currency with something in it, in order: a period with nothing has no row (chart it as 0). In subscriptions every period from the first subscription’s to `to` (never past now) has a row for each currency with a subscription begun and not ended before it, as activeAtEnd and mrr hold through quiet periods',
    }),
  })
  .openapi('Report');

/**
 * `GET /reports/{name}`: the analysts' figures over the read models, per period and group, for the
 * key's organization and environment. Money is an integer string at the 10^8 scale, summed exactly.
 */
export function reportRoutes(deps: ApiDeps): Router<ApiState> {
  const router = new Router<ApiState>({ prefix: '/api/v1/reports' });
  const api = schemaRoutes(router, { tag: 'Reports', auth: 'secretKey' });
  const description = REPORT_NAMES.map(
    (name) =>
      `\`${name}\`: ${REPORTS[name].figures.join(', ')} (by ${REPORTS[name].time}${Object.entries(
        REPORTS[name].timeBy ?? {},
      )
        .map(([group, time]) => `, by ${group} by ${time}`)
        .join(
          '',
        )}; groupBy ${REPORTS[name].groups.join(', ')}${REPORTS[name].about ? `; ${REPORTS[name].about}` : ''})`,
  ).join('; ');
  api.route(
    {
      method: 'get',
      path: '/:name',
      summary: 'Run a report',
      description: `Reports and their figures: ${description}. A report answers at most ${MAX_REPORT_ROWS} rows (a row per period, group and currency), not paginated: one that would have more is a 400 \`report_too_large\` naming the limit (narrow \`from\` / \`to\`, take a longer interval or a coarser groupBy; three years by day in three currencies is under 3,300).`,
      params: ReportParams,
      query: ReportQuery,
      response: ReportSchema,
      errors: [
        invalidFields('report_too_large'),
        {
          status: 404,
          codes: ['resource_missing'],
          description: `No report of this name: the reports are ${REPORT_NAMES.join(', ')}`,
        },
      ],
      before: (ctx) => {
        if (!isReportName(ctx.params.name))
          throw new WeirError(
            404,
            'Not Found',
            'resource_missing',
            `there is no report ${ctx.params.name}: the reports are ${REPORT_NAMES.join(', ')}`,
          );
        // Any groupBy but this report's (one no report takes too) is named with the ones it takes, not all reports'.
        const given = ctx.query.groupBy;
        const groupBy = Array.isArray(given) ? given.at(-1) : given;
        const groups: readonly string[] = REPORTS[ctx.params.name].groups;
        if (typeof groupBy === 'string' && groupBy !== '' && !groups.includes(groupBy))
          throw notGrouped(ctx.params.name);
      },
    },
    async (ctx, { params: { name }, query }) => {
      const report = REPORTS[name];
      if (!report.groups.includes(query.groupBy)) throw notGrouped(name);
      const timeZone = query.timezone || UTC;
      const range = instantRange(query, timeZone);
      const { organizationId, environment } = ctx.state.tenant;
      const params = {
        organizationId,
        environment,
        interval: query.interval,
        groupBy: query.groupBy,
        timeZone,
        ...range,
        now: new Date(deps.clock.now()).toISOString(),
      };
      const rows = withLocalDates(await runReport(deps.readStore, name, params), timeZone);
      const columns = reportColumns(report);
      if (query.format === 'json')
        return {
          object: 'report' as const,
          name,
          interval: query.interval,
          groupBy: query.groupBy,
          timezone: timeZone,
          dateField: reportTime(name, query.groupBy),
          columns,
          data: rows,
        };
      ctx.set('Cache-Control', 'no-store');
      if (query.format === 'csv') {
        ctx.set('Content-Type', 'text/csv; charset=utf-8');
        ctx.set('Content-Disposition', `attachment; filename="${name}-${query.interval}.csv"`);
        ctx.body = Readable.from(csvLines(columns, rows));
      } else {
        ctx.set('Content-Type', 'application/x-ndjson; charset=utf-8');
        ctx.body = Readable.from(ndjsonLines(rows));
      }
      return undefined;
    },
  );
  return router;
}

function* csvLines(columns: string[], rows: ReportRow[]): Generator<string> {
  yield csvRow(columns);
  for (const row of rows) yield csvRow(columns.map((c) => row[c] ?? null));
}

const AnalyticsQueryBody = bodyObject({
  collection: requiredOneOf(QUERYABLE_COLLECTIONS),
  pipeline: required(arrayOf(z.record(z.string(), z.unknown()), { max: MAX_STAGES })).openapi({
    description: `Aggregation stages run after the tenant's own \`$match\`, at most ${MAX_STAGES}`,
  }),
}).openapi('AnalyticsQuery', {
  example: {
    collection: 'checkout_sessions',
    pipeline: [{ $match: { status: 'complete' } }, { $group: { _id: '$currency', sessions: { $sum: 1 } } }],
  },
});

/** How long an analyst's pipeline may run: the embedded store runs it on the server's one thread. */
const QUERY_TIME_MS = 5000;

/** The embedded stores' timeout, or MongoDB's (`MaxTimeMSExpired`, code 50). */
const ranOutOfTime = (error: unknown): boolean =>
  error instanceof PipelineTimeoutError || (error as { code?: unknown } | null)?.code === 50;

/**
 * `POST /analytics/query`: an analyst's read-only aggregation pipeline over one read model of the
 * key's organization and environment (stages and operators from an allow-list; see analytics-query.ts).
 */
export function analyticsRoutes(deps: ApiDeps): Router<ApiState> {
  const router = new Router<ApiState>({ prefix: '/api/v1/analytics' });
  const api = schemaRoutes(router, { tag: 'Reports', auth: 'secretKey' });
  api.route(
    {
      method: 'post',
      path: '/query',
      summary: 'Run an aggregation pipeline',
      description: `Read only: the tenant's \`$match\` runs first, only reading stages and operators are taken (no \`$out\`, \`$merge\`, \`$lookup\`, \`$unionWith\`, \`$where\`, \`$function\`), and at most ${MAX_RESULTS} documents are answered; it is stopped after ${QUERY_TIME_MS / 1000} s (400 \`analytics_query_timeout\`: narrow the \`$match\` or simplify the expressions), on MongoDB and on the embedded read store alike. ${APPROXIMATE_OPERATORS.map((o) => `\`${o}\``).join(' and ')} are refused (400 naming the operator): MongoDB's are approximate by definition, and the embedded read store's differ; so are \`$toDecimal\` (amounts are integer strings: add them with \`$toLong\`) and \`$dateTrunc\` in a time zone (name a zone's day with \`$dateToString\` and its \`timezone\`), which the embedded read store answers differently; date parts, \`$dateToString\` and \`$dateToParts\` take a \`timezone\` (a tz database name or \`+hh:mm\`) and answer in that zone as MongoDB does, and on the embedded read store a \`$dateFromParts\` or \`$dateFromString\` wall time that the zone's clocks skip or show twice is a 400 naming it (give the offset you mean instead); an answer nesting arrays and objects more than ${MAX_ANSWER_DEPTH} levels deep is a 400; an answer holding an integer past 2^53 − 1, which JSON cannot carry exact to the unit, is refused too (400 \`analytics_inexact_number\` naming where it is; only integers are checked: divide amounts after summing them, not before); \`GET /reports/time-to-pay\` gives exact medians and p95 of time to pay, and a \`$push\` of the values lets you take any other median exactly. It takes no \`Idempotency-Key\`: it writes nothing, so sending it again is safe, and a key sent with it is ignored.`,
      body: AnalyticsQueryBody,
      response: z.object({ object: z.literal('list'), data: z.array(z.record(z.string(), z.unknown())) }),
      errors: [invalidFields('analytics_inexact_number', 'analytics_query_timeout')],
      readsOnly: true,
    },
    async (ctx, { body }) => {
      let pipeline: Record<string, unknown>[];
      try {
        pipeline = safePipeline(body.pipeline, ctx.state.tenant);
      } catch (error) {
        if (error instanceof AnalyticsQueryError)
          throw new ValidationError(error.field, error.message, 'parameter_invalid');
        throw error;
      }
      let data: Record<string, unknown>[];
      try {
        data = await deps.readStore.collection(body.collection).aggregate(pipeline, { maxTimeMs: QUERY_TIME_MS });
      } catch (error) {
        if (ranOutOfTime(error))
          throw new ValidationError(
            'pipeline',
            `was stopped after ${QUERY_TIME_MS / 1000} s: narrow its $match (a shorter time range) or simplify its expressions`,
            'analytics_query_timeout',
          );
        // A pipeline that passes the allow-list can still be wrong (a bad operand): the analyst's 400.
        throw new ValidationError('pipeline', `could not run: ${(error as Error).message.slice(0, 200)}`);
      }
      // Checked first, and without recursing: what follows recurses, and would overflow the stack (a 500).
      if (nestsTooDeep(data))
        throw new ValidationError(
          'pipeline',
          `its answer nests arrays and objects more than ${MAX_ANSWER_DEPTH} levels deep: project the fields you need, flatter`,
        );
      // A total past 2^53 is wrong in its last digits: refused, never answered as if exact.
      const inexact = inexactNumberIn(data);
      if (inexact) throw new ValidationError('pipeline', inexactMessage(inexact), 'analytics_inexact_number');
      return { object: 'list' as const, data: plainNumbers(data) };
    },
  );
  return router;
}

function* ndjsonLines(rows: ReportRow[]): Generator<string> {
  for (const row of rows) yield `${JSON.stringify(row)}\n`;
}
