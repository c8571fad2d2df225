import { COLLECTIONS, type CheckoutSessionDoc } from '../../../projections/collections.ts';
import { CUSTOMERS, type CustomerDoc } from '../../../projections/customers.projection.ts';
import { sendSessionsCsv } from '../../../read-api/routes/checkout-session-export.ts';
import { NotFoundError, ValidationError } from '../../../shared/errors.ts';
import { apiFor } from '../../api.ts';
import { can } from '../../auth/roles.ts';
import type { DashboardContext, DashboardDeps } from '../../context.ts';
import { isHtmx, redirectTo, sendHtml } from '../../http.ts';
import { definePage } from '../../page.ts';
import { Alert, Card, ShortId } from '../../ui/components.tsx';
import { AppLayout } from '../../ui/layout.tsx';
import { type ActionForm, DetailBody, loadDetail } from './detail.tsx';
import { EXPORT_PATH, LIST_PATH, loadSessions, SessionsFilters, SessionsTable } from './list.tsx';
import { appliedQuery, parseSessionsQuery, sessionsFilter } from './list-query.ts';
import { chooseTimeZone, timeZoneOf } from '../../ui/time-zone-field.tsx';

/** What a done action says on the page it redirects to (`?done=`). */
const DONE: Record<string, string> = {
  canceled: 'The session is canceled.',
  completed: 'The session is complete with the amount received.',
  recovered: 'The payment is found and credited to this session.',
  refunded: 'The payment is marked refunded.',
};

async function renderDetail(ctx: DashboardContext, deps: DashboardDeps, id: string, form: ActionForm, status = 200) {
  const detail = await loadDetail(deps, ctx.state.tenant, id);
  if (!detail) throw new NotFoundError('checkout session', id);
  const body = (
    <DetailBody
      detail={detail}
      csrf={ctx.state.csrfToken}
      canManage={can(ctx.state.user.role, 'manage')}
      form={form}
      timeZone={ctx.state.timeZone}
    />
  );
  if (isHtmx(ctx)) return sendHtml(ctx, body, status);
  await sendHtml(
    ctx,
    <AppLayout
      ctx={ctx}
      title="Checkout session"
      screen="checkoutSessions"
      actions={
        <a href={LIST_PATH} class="button button-quiet">
          All sessions
        </a>
      }
    >
      <p class="lead">
        <ShortId value={detail.session.id} keep={40} />
      </p>
      {/* Outside the live body: a refresh when the session moves must not wipe what the action said. */}
      {form.message ? <Alert tone={form.message.tone}>{<span safe>{form.message.text}</span>}</Alert> : ''}
      {body}
    </AppLayout>,
    status,
  );
}

/** What the API answered a session action: a redirect to the session when done, its message shown there otherwise. */
async function showAnswer(
  ctx: DashboardContext,
  deps: DashboardDeps,
  id: string,
  answer: { status: number; body: { message?: string } },
  done: string,
): Promise<void> {
  if (answer.status < 400) return redirectTo(ctx, `${LIST_PATH}/${encodeURIComponent(id)}?done=${done}`);
  const message = { tone: 'danger' as const, text: answer.body.message ?? 'Refused.' };
  await renderDetail(ctx, deps, id, { message }, answer.status);
}

/** A session action through the API's own route. */
const sessionAction =
  (deps: DashboardDeps, apiPath: string, done: string) =>
  async (ctx: DashboardContext): Promise<void> => {
    const id = ctx.params.id!;
    const answer = await apiFor(ctx, deps)<{ message?: string }>(
      'POST',
      `/api/v1/checkout/sessions/${encodeURIComponent(id)}/${apiPath}`,
    );
    if (answer.status === 404) throw new NotFoundError('checkout session', id);
    await showAnswer(ctx, deps, id, answer, done);
  };

/**
 * Checkout sessions: the list (filters, search, pages; live), and a session's page with its payment
 * intent, deposit addresses, on-chain payments with explorer links, its events from the log, the
 * webhooks sent for it with each attempt, and the actions (cancel, complete partial, recover, mark
 * late money refunded), each through the API's route.
 */
export const page = definePage({
  screen: 'checkoutSessions',
  routes(routes, deps) {
    routes.get(LIST_PATH, 'read', async (ctx) => {
      // A zone applied here becomes the dashboard's: every page shows its times in it from now on.
      const { query, errors } = parseSessionsQuery(ctx.query, chooseTimeZone(ctx, deps.publicUrl));
      // The list, its refresh, pages and download by the filters it can apply; the form shows the refused ones.
      const applied = appliedQuery(query, errors);
      const { sessions, count, customers } = await loadSessions(deps.readStore, ctx.state.tenant, applied);
      const status = Object.keys(errors).length > 0 ? 400 : 200;
      const table = <SessionsTable sessions={sessions} count={count} customers={customers} query={applied} />;
      if (isHtmx(ctx)) return sendHtml(ctx, table, status);
      await sendHtml(
        ctx,
        <AppLayout ctx={ctx} title="Checkout sessions" screen="checkoutSessions">
          <Card id="sessions-filters" class="filters-card">
            <SessionsFilters query={query} errors={errors} />
          </Card>
          {table}
        </AppLayout>,
        status,
      );
    });

    // Before `:id`: the list's filters as a CSV file, streamed by the API export's own code.
    routes.get(EXPORT_PATH, 'read', (ctx) => {
      const { query, errors } = parseSessionsQuery(ctx.query, timeZoneOf(ctx.query, ctx.state.timeZone));
      const [field, message] = Object.entries(errors)[0] ?? [];
      if (field && message) throw new ValidationError(field, message);
      const sessions = deps.readStore.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions);
      const customers = deps.readStore.collection<CustomerDoc>(CUSTOMERS);
      sendSessionsCsv(
        ctx,
        { sessions, customers },
        sessionsFilter(ctx.state.tenant, query),
        deps.clock,
        query.timezone,
      );
    });

    routes.get(`${LIST_PATH}/:id`, 'read', async (ctx) => {
      const done = typeof ctx.query.done === 'string' ? DONE[ctx.query.done] : undefined;
      await renderDetail(ctx, deps, ctx.params.id!, done ? { message: { tone: 'success', text: done } } : {});
    });

    routes.post(`${LIST_PATH}/:id/cancel`, 'manage', sessionAction(deps, 'cancel', 'canceled'));
    routes.post(
      `${LIST_PATH}/:id/complete-partial`,
      'manage',
      sessionAction(deps, 'complete-partial-checkout-session', 'completed'),
    );

    // Late money refunded outside Weir: recorded through the API's mark-as-refund of the session's intent.
    routes.post(`${LIST_PATH}/:id/mark-refunded`, 'manage', async (ctx) => {
      const id = ctx.params.id!;
      const detail = await loadDetail(deps, ctx.state.tenant, id);
      if (!detail) throw new NotFoundError('checkout session', id);
      const comment = ctx.state.form.get('markRefundedComment')?.trim() ?? '';
      const answer = await apiFor(ctx, deps)<{ message?: string }>(
        'POST',
        `/api/v1/payment-intents/${encodeURIComponent(detail.session.paymentIntent.id)}/mark-as-refund`,
        comment ? { markRefundedComment: comment } : {},
      );
      await showAnswer(ctx, deps, id, answer, 'refunded');
    });

    routes.post(`${LIST_PATH}/:id/recover`, 'manage', async (ctx) => {
      const id = ctx.params.id!;
      const chainId = ctx.state.form.get('chainId')?.trim() ?? '';
      const transactionHash = ctx.state.form.get('transactionHash')?.trim() ?? '';
      // The API checks both fields; a chain id that is not a number goes as typed so it names the field.
      const answer = await apiFor(ctx, deps)<{ message?: string; code?: string }>(
        'POST',
        `/api/v1/checkout/sessions/${encodeURIComponent(id)}/auto-recover`,
        { chainId: /^\d{1,15}$/.test(chainId) ? Number(chainId) : chainId, transactionHash },
      );
      if (answer.body.code === 'resource_missing') throw new NotFoundError('checkout session', id);
      if (answer.status < 400) return redirectTo(ctx, `${LIST_PATH}/${encodeURIComponent(id)}?done=recovered`);
      const message = (answer.body.message ?? 'Refused.').replace(/^(chainId|transactionHash): /, '');
      const field = answer.field === 'chainId' || answer.field === 'transactionHash' ? answer.field : null;
      await renderDetail(
        ctx,
        deps,
        id,
        {
          ...(field ? {} : { message: { tone: 'danger', text: message } }),
          recover: { chainId, transactionHash, errors: field ? { [field]: message } : {} },
        },
        answer.status,
      );
    });
  },
});
