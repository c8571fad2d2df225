import { COLLECTIONS, type WebhookDeliveryDoc, type WebhookEndpointDoc } from '../../../projections/collections.ts';
import { NotFoundError } from '../../../shared/errors.ts';
import { previousSecretExpiry } from '../../../actors/webhook-endpoint.ts';
import {
  referenceNameOf,
  specNameOf,
  TEST_WEBHOOK_EVENT_TYPE,
  WEBHOOK_EVENT_TYPES,
} from '../../../webhooks/webhook-event-types.ts';
import { apiFor } from '../../api.ts';
import { reauthenticate, ReauthFields, reauthPrompt } from '../../auth/reauth.tsx';
import type { DashboardContext, DashboardDeps, DashboardTenant } from '../../context.ts';
import { isHtmx, redirectTo, sendHtml } from '../../http.ts';
import type { PageRoutes } from '../../page.ts';
import {
  Alert,
  Badge,
  Card,
  CsrfField,
  DateTime,
  EmptyState,
  Field,
  liveRefresh,
  TableScroll,
  type Tone,
} from '../../ui/components.tsx';
import { CopyField, SecretShownOnce } from '../../ui/copy.tsx';
import { DeliveryStatus } from '../../ui/delivery-status.tsx';
import { type Option, SelectField } from '../../ui/form-parts.tsx';
import { AppLayout } from '../../ui/layout.tsx';
import { withQuery } from '../../ui/list-controls.tsx';
import { DEVELOPERS } from './api-keys.tsx';
import { apiMessage, ConfirmPage, DoneAlert, errorsOf, type FormErrors } from './forms.tsx';

const WEBHOOKS = `${DEVELOPERS}/webhooks`;
const DELIVERIES_SHOWN = 50;

/** The endpoint form as typed: what a 4xx re-renders. */
type EndpointForm = { url: string; description: string; events: string[]; enabled: boolean; errors: FormErrors };

/** API field paths → the inputs of the endpoint form. */
const ENDPOINT_INPUTS = { url: 'url', description: 'description', enabledEvents: 'events', isDisabled: 'enabled' };

export async function listEndpoints(deps: DashboardDeps, tenant: DashboardTenant): Promise<WebhookEndpointDoc[]> {
  return deps.readStore
    .collection<WebhookEndpointDoc>(COLLECTIONS.webhookEndpoints)
    .find({ ...tenant, deleted: false }, { sort: { createdAt: -1 } });
}

const eventsSummary = (events: string[]): string =>
  events.includes('*') ? 'All events' : events.length === 1 ? events[0]! : `${events.length} event types`;

/** The endpoints card of the Developers page. */
export function EndpointsCard({ endpoints }: { endpoints: WebhookEndpointDoc[] }): JSX.Element {
  return (
    <Card
      title="Webhook endpoints"
      id="webhook-endpoints"
      actions={
        <a class="button-secondary" href={`${WEBHOOKS}/new`}>
          Add endpoint
        </a>
      }
    >
      {endpoints.length === 0 ? (
        <EmptyState message="No webhook endpoints." hint="Add one to be told of payments, invoices and more." />
      ) : (
        <TableScroll label="Webhook endpoints with their events and state">
          <table>
            <thead>
              <tr>
                <th>URL</th>
                <th class="hide-narrow">Events</th>
                <th>State</th>
              </tr>
            </thead>
            <tbody>
              {endpoints.map((e) => (
                <tr>
                  <td class="url-cell">
                    <a href={`${WEBHOOKS}/${e.id}`} safe>
                      {e.url}
                    </a>
                    <span class="muted cell-note" safe>
                      {e.description}
                    </span>
                  </td>
                  <td class="hide-narrow" safe>
                    {eventsSummary(e.enabledEvents.events)}
                  </td>
                  <td>
                    {e.isDisabled ? (
                      <Badge tone="neutral" label="Disabled" />
                    ) : (
                      <Badge tone="success" label="Enabled" />
                    )}
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

function FormAlert({ errors }: { errors: FormErrors }): JSX.Element {
  return errors.form ? (
    <Alert tone="danger">
      <span safe>{errors.form}</span>
    </Alert>
  ) : (
    ''
  );
}

/**
 * The kinds offered as checkboxes: a kind with two names once, by the reference API's (the one `*`
 * sends), noted with the specification's; that one only for an endpoint already subscribed by it
 * through the API, so that saving the form keeps it.
 */
export const offeredEventTypes = (events: readonly string[]): string[] =>
  WEBHOOK_EVENT_TYPES.filter((type) => referenceNameOf(type) === type || events.includes(type));

/** What a kind's checkbox says beside its name when it has another. */
function OtherName({ type }: { type: string }): JSX.Element {
  const spec = specNameOf(type);
  const reference = referenceNameOf(type);
  if (spec !== undefined)
    return (
      <span class="muted">
        {" (the spec's "}
        <code>{spec}</code>)
      </span>
    );
  if (reference === type) return '';
  return (
    <span class="muted">
      {" (the spec's name for "}
      <code safe>{reference}</code>)
    </span>
  );
}

/** URL, description, enabled and the event types (every one as a checkbox, or all with `*`). */
function EndpointFields({ form }: { form: EndpointForm }): JSX.Element {
  const error = form.errors.events;
  return (
    <>
      <Field
        name="url"
        label="Endpoint URL"
        type="url"
        value={form.url}
        error={form.errors.url}
        hint="Weir POSTs signed JSON here."
        required
      />
      <Field name="description" label="Description" value={form.description} error={form.errors.description} required />
      <div class="field">
        <label class="choice">
          <input type="checkbox" name="enabled" value="yes" checked={form.enabled} />
          <span>Enabled (a disabled endpoint gets nothing but test events)</span>
        </label>
      </div>
      <fieldset
        class={['event-types', error ? 'has-error' : '']}
        aria-describedby={error ? 'events-error' : undefined}
        id="field-events"
      >
        <legend>Events to send</legend>
        <label class="choice">
          <input type="checkbox" name="events" value="*" checked={form.events.includes('*')} />
          <span>
            All events, present and future, but <code>audit.checkpoint</code> (the whole log's signed checkpoints: tick
            it by name)
          </span>
        </label>
        <div class="event-grid">
          {offeredEventTypes(form.events).map((type) => (
            <label class="choice">
              <input type="checkbox" name="events" value={type} checked={form.events.includes(type)} />
              <span>
                <code safe>{type}</code>
                <OtherName type={type} />
              </span>
            </label>
          ))}
        </div>
        {error ? (
          <p class="error" id="events-error" safe>
            {error}
          </p>
        ) : (
          ''
        )}
      </fieldset>
    </>
  );
}

const formOf = (form: URLSearchParams): EndpointForm => ({
  url: (form.get('url') ?? '').trim(),
  description: (form.get('description') ?? '').trim(),
  events: form.getAll('events'),
  enabled: form.get('enabled') === 'yes',
  errors: {},
});

const bodyOf = (form: EndpointForm) => ({
  url: form.url,
  description: form.description,
  isDisabled: !form.enabled,
  enabledEvents: { events: form.events },
});

function NewEndpointPage({ ctx, form }: { ctx: DashboardContext; form: EndpointForm }): JSX.Element {
  return (
    <AppLayout ctx={ctx} title="Add a webhook endpoint" screen="developers">
      <p>
        <a href={DEVELOPERS}>← Developers</a>
      </p>
      <Card>
        <form method="post" action={WEBHOOKS} id="endpoint-form">
          <CsrfField token={ctx.state.csrfToken} />
          <FormAlert errors={form.errors} />
          <EndpointFields form={form} />
          <ReauthFields user={ctx.state.user} error={form.errors.reauth} />
          <button type="submit" class="button-primary">
            Add endpoint
          </button>
        </form>
      </Card>
    </AppLayout>
  );
}

const attemptTone = (statusCode: number | null): Tone =>
  statusCode !== null && statusCode >= 200 && statusCode < 300 ? 'success' : 'danger';

/**
 * How long after the first attempt another came ("+1 m 30 s"): the times are shown to the minute,
 * so retries 30 s apart would otherwise look like one moment.
 */
export function sinceFirst(firstIso: string, iso: string): string {
  let seconds = Math.max(0, Math.round((Date.parse(iso) - Date.parse(firstIso)) / 1000));
  const parts: string[] = [];
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3600],
    ['m', 60],
  ] as const) {
    if (seconds >= size) parts.push(`${Math.floor(seconds / size)} ${unit}`);
    seconds %= size;
  }
  if (seconds > 0 || parts.length === 0) parts.push(`${seconds} s`);
  return `+${parts.join(' ')}`;
}

const CANCEL_REASONS: Record<string, string> = {
  endpoint_disabled: 'the endpoint was disabled',
  endpoint_deleted: 'the endpoint was deleted',
};

/**
 * What the attempts alone do not tell: the event id a receiver dedupes on (its `x-webhook-id`),
 * and why a delivery stopped before succeeding (kept, as past, once it was resent).
 */
function DeliveryFacts({ ctx, delivery }: { ctx: DashboardContext; delivery: WebhookDeliveryDoc }): JSX.Element {
  const { canceled } = delivery;
  return (
    <p class="muted delivery-facts">
      {'Event '}
      <code safe>{delivery.eventId}</code>
      {' (its x-webhook-id header, the same on every attempt)'}
      {delivery.status === 'canceled' && canceled ? (
        <>
          <br />
          <span safe>{`Canceled: ${CANCEL_REASONS[canceled.reason] ?? canceled.reason}, `}</span>
          <DateTime iso={canceled.at} timeZone={ctx.state.timeZone} />
          {'. Nothing more is tried unless you resend it.'}
        </>
      ) : canceled ? (
        // Resent since: its status is where it stands now; the cancel stays as what happened before.
        <>
          <br />
          <span safe>{`Was canceled (${CANCEL_REASONS[canceled.reason] ?? canceled.reason}, `}</span>
          <DateTime iso={canceled.at} timeZone={ctx.state.timeZone} />
          {'), then resent.'}
        </>
      ) : (
        ''
      )}
    </p>
  );
}

/** The delivery log of one endpoint: each delivery with its attempts (status, duration, answer) and Resend. */
export function DeliveriesCard(props: {
  ctx: DashboardContext;
  endpoint: WebhookEndpointDoc;
  deliveries: WebhookDeliveryDoc[];
}): JSX.Element {
  const { ctx, endpoint, deliveries } = props;
  return (
    <Card
      title="Deliveries"
      id="deliveries"
      aria-live="polite"
      {...liveRefresh(withQuery(`${WEBHOOKS}/${endpoint.id}/deliveries`, { timezone: ctx.state.timeZone }), [
        'webhooks',
      ])}
    >
      {deliveries.length === 0 ? (
        <EmptyState message="Nothing sent yet." hint="Send a test event to see a delivery here." />
      ) : (
        <ul class="delivery-list">
          {deliveries.map((d) => {
            const resent = new Set((d.resends ?? []).map((r) => r.attempt));
            return (
              <li>
                <details class="delivery" id={`delivery-${d.id}`}>
                  <summary>
                    <code safe>{d.eventType}</code>
                    <DeliveryStatus delivery={d} timeZone={ctx.state.timeZone} />
                    <span class="muted" safe>{`${d.attempts} attempt${d.attempts === 1 ? '' : 's'}`}</span>
                    <span class="muted delivery-time">
                      <DateTime iso={d.createdAt} timeZone={ctx.state.timeZone} />
                    </span>
                  </summary>
                  <DeliveryFacts ctx={ctx} delivery={d} />
                  {d.log.length === 0 ? (
                    <p class="muted">Not tried yet.</p>
                  ) : (
                    <TableScroll label={`Attempts of ${d.eventType}`}>
                      <table class="attempts">
                        <caption class="visually-hidden" safe>{`Attempts of ${d.eventType}`}</caption>
                        <thead>
                          <tr>
                            <th>#</th>
                            <th>Answer</th>
                            <th class="amount">Duration</th>
                            <th class="hide-narrow">When</th>
                            <th>Response</th>
                          </tr>
                        </thead>
                        <tbody>
                          {d.log.map((a) => (
                            <tr>
                              <td safe>{`${a.attempt}${resent.has(a.attempt) ? ' (resent)' : ''}`}</td>
                              <td class="nowrap">
                                <Badge
                                  tone={attemptTone(a.statusCode)}
                                  label={a.statusCode !== null ? `HTTP ${a.statusCode}` : 'No answer'}
                                />
                              </td>
                              <td class="amount nowrap" safe>{`${a.durationMs} ms`}</td>
                              <td class="hide-narrow nowrap">
                                <DateTime iso={a.at} timeZone={ctx.state.timeZone} />
                                {a.attempt > 1 && d.log[0] ? (
                                  <span class="muted" safe>{` (${sinceFirst(d.log[0].at, a.at)})`}</span>
                                ) : (
                                  ''
                                )}
                              </td>
                              <td class="response-cell">
                                <code safe>{a.response ?? a.error ?? '—'}</code>
                              </td>
                            </tr>
                          ))}
                        </tbody>
                      </table>
                    </TableScroll>
                  )}
                  <form method="post" action={`${WEBHOOKS}/${endpoint.id}/deliveries/${d.id}/resend`}>
                    <CsrfField token={ctx.state.csrfToken} />
                    <button type="submit" class="button-secondary">
                      Resend
                    </button>
                    <span class="muted">{' Sends the same event again now, as a new attempt.'}</span>
                  </form>
                </details>
              </li>
            );
          })}
        </ul>
      )}
    </Card>
  );
}

/**
 * What a page answering a form shows beyond the endpoint: the form as typed, the secret revealed
 * or regenerated (in its card), the new endpoint's secret (`created`, once, above all), an error.
 */
type EndpointExtra = {
  form?: EndpointForm;
  secret?: { value: string; regenerated: boolean };
  created?: { secret: string };
  error?: string;
};

/** The new endpoint's signing secret, in the answer to its creation only, and how to see it again. */
function CreatedSecret({ ctx, secret }: { ctx: DashboardContext; secret: string }): JSX.Element {
  return (
    <SecretShownOnce
      id="new-signing-secret"
      label="Signing secret"
      value={secret}
      hint="Verify the signature headers of each delivery with it (x-weir-signature, x-webhook-signature)."
    >
      <strong>Endpoint added.</strong> Copy its signing secret now: it is shown this once. To see it later, use Reveal
      secret under Signing secret below; it asks you to <span safe>{reauthPrompt(ctx.state.user)}</span>.
    </SecretShownOnce>
  );
}

/** How long a regenerate keeps the old secret signing beside the new one, in seconds (the API allows up to a day). */
const KEEP_OLD_SECRET: readonly Option[] = [
  { value: '0', label: 'Now (stop the old secret at once)' },
  { value: '3600', label: '1 hour' },
  { value: '86400', label: '24 hours' },
];

/**
 * The secret, hidden until revealed; regenerating it may keep the old one signing a while (so a
 * receiver not yet moved to the new one still passes), and while it does the card says until when.
 */
export function SigningSecretCard(props: {
  ctx: DashboardContext;
  endpoint: WebhookEndpointDoc;
  secret: EndpointExtra['secret'];
  nowMs: number;
}): JSX.Element {
  const { ctx, endpoint, secret, nowMs } = props;
  const base = `${WEBHOOKS}/${endpoint.id}`;
  const previousUntil = previousSecretExpiry(endpoint, nowMs);
  return (
    <Card title="Signing secret" id="signing-secret">
      {secret ? (
        <>
          {secret.regenerated ? (
            <Alert tone="success">New secret made: deliveries are signed with it from now on.</Alert>
          ) : (
            ''
          )}
          <CopyField id="signing-secret-value" label="Signing secret" value={secret.value} />
        </>
      ) : (
        <p class="muted">
          Deliveries are signed with this secret (see the signature headers). It is hidden: Reveal secret asks you to{' '}
          <span safe>{reauthPrompt(ctx.state.user)}</span>.
        </p>
      )}
      {previousUntil ? (
        <p class="hint" id="previous-secret-expiry">
          The previous secret also signs deliveries (a second <code>v1</code> in x-weir-signature) until{' '}
          <DateTime iso={previousUntil} timeZone={ctx.state.timeZone} />.
        </p>
      ) : (
        ''
      )}
      <form method="post" action={`${base}/secret`}>
        <CsrfField token={ctx.state.csrfToken} />
        <button type="submit" class="button-secondary">
          Reveal secret
        </button>
      </form>
      <form method="post" action={`${base}/regenerate`}>
        <CsrfField token={ctx.state.csrfToken} />
        <SelectField
          name="previousSecretExpiresInSeconds"
          label="Keep the old secret valid for"
          options={KEEP_OLD_SECRET}
          value="0"
          hint="While it lasts, each delivery is signed with both, so your receiver passes with either until you deploy the new one."
        />
        <button type="submit" class="button-secondary">
          Regenerate secret
        </button>
      </form>
    </Card>
  );
}

/** A delivery id as the API makes them (a UUID): only such a one, from the address, goes into a link. */
const DELIVERY_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** After Send test event: a link to its delivery in the log below (its id, from the API's answer, is in the address). */
export function TestSent({ ctx }: { ctx: DashboardContext }): JSX.Element {
  if (ctx.query.done !== 'test') return '';
  const id = ctx.query.delivery;
  return (
    <Alert tone="success">
      <span>{`Test event (${TEST_WEBHOOK_EVENT_TYPE}) sent: `}</span>
      {typeof id === 'string' && DELIVERY_ID.test(id) ? (
        <a href={`#delivery-${id}`} id="test-delivery-link">
          see its delivery under Deliveries
        </a>
      ) : (
        'see it under Deliveries'
      )}
      .
    </Alert>
  );
}

function EndpointPage(props: {
  ctx: DashboardContext;
  endpoint: WebhookEndpointDoc;
  deliveries: WebhookDeliveryDoc[];
  extra: EndpointExtra;
  nowMs: number;
}): JSX.Element {
  const { ctx, endpoint, deliveries, extra, nowMs } = props;
  const base = `${WEBHOOKS}/${endpoint.id}`;
  const form: EndpointForm = extra.form ?? {
    url: endpoint.url,
    description: endpoint.description,
    events: endpoint.enabledEvents.events,
    enabled: !endpoint.isDisabled,
    errors: {},
  };
  return (
    <AppLayout
      ctx={ctx}
      title="Webhook endpoint"
      screen="developers"
      location={base}
      actions={
        <form method="post" action={`${base}/test`}>
          <CsrfField token={ctx.state.csrfToken} />
          <button type="submit" class="button-primary">
            Send test event
          </button>
        </form>
      }
    >
      <p>
        <a href={DEVELOPERS}>← Developers</a>
      </p>
      {extra.created ? <CreatedSecret ctx={ctx} secret={extra.created.secret} /> : ''}
      <TestSent ctx={ctx} />
      <DoneAlert
        ctx={ctx}
        messages={{
          saved: 'Endpoint saved.',
          resent: 'Sent again: the new attempt shows under Deliveries.',
        }}
      />
      {extra.error ? (
        <Alert tone="danger">
          <span safe>{extra.error}</span>
        </Alert>
      ) : (
        ''
      )}
      <p class="endpoint-url">
        <code safe>{endpoint.url}</code>{' '}
        {endpoint.isDisabled ? <Badge tone="neutral" label="Disabled" /> : <Badge tone="success" label="Enabled" />}
      </p>
      <DeliveriesCard ctx={ctx} endpoint={endpoint} deliveries={deliveries} />
      <div class="grid grid-2">
        <Card title="Settings" id="endpoint-settings">
          <form method="post" action={base} id="endpoint-form">
            <CsrfField token={ctx.state.csrfToken} />
            <FormAlert errors={form.errors} />
            <EndpointFields form={form} />
            <p class="hint">
              Changing the URL asks you to <span safe>{reauthPrompt(ctx.state.user)}</span>.
            </p>
            <button type="submit" class="button-primary">
              Save
            </button>
          </form>
        </Card>
        <div>
          <SigningSecretCard ctx={ctx} endpoint={endpoint} secret={extra.secret} nowMs={nowMs} />
          <Card title="Delete endpoint" id="delete-endpoint">
            <p class="muted">Nothing more is sent to it; deliveries waiting for a retry end.</p>
            <a class="button-danger" href={`${base}/delete`}>
              Delete endpoint
            </a>
          </Card>
        </div>
      </div>
    </AppLayout>
  );
}

/**
 * Webhook endpoints through `/api/v1/webhook-endpoints`: adding one, changing its URL, revealing or
 * regenerating its secret ask for the password again; the delivery log refreshes live.
 */
export function webhookRoutes(routes: PageRoutes, deps: DashboardDeps): void {
  const endpoints = deps.readStore.collection<WebhookEndpointDoc>(COLLECTIONS.webhookEndpoints);
  const deliveries = deps.readStore.collection<WebhookDeliveryDoc>(COLLECTIONS.webhookDeliveries);
  const load = async (ctx: DashboardContext, id = ctx.params.id!): Promise<WebhookEndpointDoc> => {
    const doc = await endpoints.get(id);
    const { organizationId, environment } = ctx.state.tenant;
    if (!doc || doc.deleted || doc.organizationId !== organizationId || doc.environment !== environment)
      throw new NotFoundError('webhook endpoint', id);
    return doc;
  };
  const deliveriesOf = (ctx: DashboardContext, endpoint: WebhookEndpointDoc) =>
    deliveries.find(
      { ...ctx.state.tenant, endpointId: endpoint.id },
      { sort: { createdAt: -1 }, limit: DELIVERIES_SHOWN },
    );
  const show = async (ctx: DashboardContext, extra: EndpointExtra = {}, status = 200, id = ctx.params.id!) => {
    const endpoint = await load(ctx, id);
    await sendHtml(
      ctx,
      <EndpointPage
        ctx={ctx}
        endpoint={endpoint}
        deliveries={await deliveriesOf(ctx, endpoint)}
        extra={extra}
        nowMs={deps.clock.now()}
      />,
      status,
    );
  };

  routes.get(`${WEBHOOKS}/new`, 'developers', async (ctx) => {
    const form: EndpointForm = { url: '', description: '', events: [], enabled: true, errors: {} };
    await sendHtml(ctx, <NewEndpointPage ctx={ctx} form={form} />);
  });

  routes.post(WEBHOOKS, 'developers', async (ctx) => {
    if (!(await reauthenticate(ctx, deps, 'add a webhook endpoint'))) return;
    const form = formOf(ctx.state.form);
    const answer = await apiFor(ctx, deps)<{ id: string; secret: string }>(
      'POST',
      '/api/v1/webhook-endpoints',
      bodyOf(form),
    );
    if (answer.status >= 400) {
      const errors = errorsOf(answer, ENDPOINT_INPUTS);
      return sendHtml(ctx, <NewEndpointPage ctx={ctx} form={{ ...form, errors }} />, answer.status);
    }
    // The endpoint's page in this answer, not after a redirect: the secret is never in an address
    // or kept anywhere to be shown later (the page names its own address for a reload).
    await show(ctx, { created: { secret: answer.body.secret } }, 200, answer.body.id);
  });

  routes.get(`${WEBHOOKS}/:id`, 'developers', (ctx) => show(ctx));

  routes.get(`${WEBHOOKS}/:id/deliveries`, 'developers', async (ctx) => {
    const endpoint = await load(ctx);
    if (!isHtmx(ctx)) return ctx.redirect(`${WEBHOOKS}/${endpoint.id}`);
    await sendHtml(
      ctx,
      <DeliveriesCard ctx={ctx} endpoint={endpoint} deliveries={await deliveriesOf(ctx, endpoint)} />,
    );
  });

  routes.post(`${WEBHOOKS}/:id`, 'developers', async (ctx) => {
    const endpoint = await load(ctx);
    const form = formOf(ctx.state.form);
    // A new URL sends the tenant's data elsewhere: as sensitive as a new endpoint.
    if (form.url !== endpoint.url && !(await reauthenticate(ctx, deps, 'change the endpoint URL'))) return;
    const answer = await apiFor(ctx, deps)('PUT', `/api/v1/webhook-endpoints/${endpoint.id}`, bodyOf(form));
    if (answer.status >= 400)
      return show(ctx, { form: { ...form, errors: errorsOf(answer, ENDPOINT_INPUTS) } }, answer.status);
    redirectTo(ctx, `${WEBHOOKS}/${endpoint.id}?done=saved`);
  });

  routes.post(`${WEBHOOKS}/:id/secret`, 'developers', async (ctx) => {
    const endpoint = await load(ctx);
    if (!(await reauthenticate(ctx, deps, 'see the signing secret'))) return;
    const answer = await apiFor(ctx, deps)<{ secret: string }>('GET', `/api/v1/webhook-endpoints/${endpoint.id}`);
    await show(ctx, { secret: { value: answer.body.secret, regenerated: false } }, answer.status);
  });

  routes.post(`${WEBHOOKS}/:id/regenerate`, 'developers', async (ctx) => {
    const endpoint = await load(ctx);
    if (!(await reauthenticate(ctx, deps, 'replace the signing secret'))) return;
    // Carried through the password prompt; a number as the API takes it, anything else left for it to refuse.
    const keep = ctx.state.form.get('previousSecretExpiresInSeconds') ?? '0';
    const answer = await apiFor(ctx, deps)<{ secret: string }>(
      'POST',
      `/api/v1/webhook-endpoints/${endpoint.id}/regenerate`,
      { previousSecretExpiresInSeconds: /^\d{1,6}$/.test(keep) ? Number(keep) : keep },
    );
    if (answer.status >= 400) return show(ctx, { error: apiMessage(answer) }, answer.status);
    await show(ctx, { secret: { value: answer.body.secret, regenerated: true } }, answer.status);
  });

  routes.post(`${WEBHOOKS}/:id/test`, 'developers', async (ctx) => {
    const endpoint = await load(ctx);
    const answer = await apiFor(ctx, deps)<{ deliveryId: string }>(
      'POST',
      `/api/v1/webhook-endpoints/${endpoint.id}/test`,
    );
    if (answer.status >= 400) return show(ctx, { error: apiMessage(answer) }, answer.status);
    redirectTo(ctx, withQuery(`${WEBHOOKS}/${endpoint.id}`, { done: 'test', delivery: answer.body.deliveryId }));
  });

  routes.post(`${WEBHOOKS}/:id/deliveries/:deliveryId/resend`, 'developers', async (ctx) => {
    const endpoint = await load(ctx);
    const answer = await apiFor(ctx, deps)(
      'POST',
      `/api/v1/webhook-endpoints/${endpoint.id}/deliveries/${encodeURIComponent(ctx.params.deliveryId!)}/resend`,
    );
    if (answer.status >= 400) return show(ctx, { error: apiMessage(answer) }, answer.status);
    redirectTo(ctx, `${WEBHOOKS}/${endpoint.id}?done=resent`);
  });

  routes.get(`${WEBHOOKS}/:id/delete`, 'developers', async (ctx) => {
    const endpoint = await load(ctx);
    await sendHtml(
      ctx,
      <ConfirmPage
        ctx={ctx}
        title="Delete webhook endpoint"
        message={`Delete the endpoint ${endpoint.url}? Nothing more is sent to it. This cannot be undone.`}
        action={`${WEBHOOKS}/${endpoint.id}/delete`}
        button="Delete endpoint"
        back={`${WEBHOOKS}/${endpoint.id}`}
      />,
    );
  });

  routes.post(`${WEBHOOKS}/:id/delete`, 'developers', async (ctx) => {
    const endpoint = await load(ctx);
    await apiFor(ctx, deps)('DELETE', `/api/v1/webhook-endpoints/${endpoint.id}`);
    redirectTo(ctx, `${DEVELOPERS}?done=endpoint-deleted`);
  });
}
