import test from 'ava';
import type { WebhookDeliveryDoc, WebhookEndpointDoc } from '../../projections/collections.ts';
import type { DashboardContext } from '../context.ts';
import { DeliveriesCard } from '../pages/developers/webhooks.tsx';
import { DetailBody } from '../pages/checkout-sessions/detail.tsx';
import { sessionAfter } from '../pages/checkout-sessions/session-docs.fixture.ts';
import { WebhookFailures } from '../pages/home.tsx';
import { deliveryStatusOf } from './delivery-status.tsx';

const failedAttempt = (attempt: number, at: string) => ({
  attempt,
  at,
  statusCode: 500,
  error: 'receiver answered 500',
  durationMs: 3,
});

const delivery = (over: Partial<WebhookDeliveryDoc>): WebhookDeliveryDoc =>
  ({
    id: 'dl_1',
    endpointId: 'ep_1',
    eventId: 'evt_7f91ac47',
    eventType: 'checkout_session.completed',
    source: { streamId: 'checkout_session-x', revision: 3 },
    createdAt: '2026-12-01T06:29:54.695Z',
    status: 'pending',
    attempts: 0,
    nextAttemptAt: Date.parse('2026-12-01T06:29:54.695Z'),
    log: [],
    resends: [],
    ...over,
  }) as WebhookDeliveryDoc;

const NOT_TRIED = delivery({});
const RETRYING = delivery({
  attempts: 2,
  nextAttemptAt: Date.parse('2026-12-01T06:31:24.695Z'),
  log: [failedAttempt(1, '2026-12-01T06:29:54.702Z'), failedAttempt(2, '2026-12-01T06:30:24.900Z')],
});
const GAVE_UP = delivery({
  status: 'failed',
  attempts: 10,
  nextAttemptAt: null,
  log: Array.from({ length: 10 }, (_, i) => failedAttempt(i + 1, '2026-12-01T06:30:24.900Z')),
});
/** The tenth attempt failed, no retry left, the `failed` that follows not yet folded in. */
const LAST_ATTEMPT_FAILED = { ...GAVE_UP, status: 'pending' as const };
const ENDPOINT_GONE = delivery({
  status: 'canceled',
  attempts: 1,
  nextAttemptAt: null,
  log: [failedAttempt(1, '2026-12-01T06:29:54.702Z')],
  canceled: { at: '2026-12-01T06:30:00.000Z', reason: 'endpoint_deleted' },
});
const DELIVERED = delivery({
  status: 'succeeded',
  attempts: 1,
  nextAttemptAt: null,
  log: [{ ...failedAttempt(1, '2026-12-01T06:29:54.702Z'), statusCode: 200, error: null }],
});

test('each delivery state reads truthfully: pending, retrying with its next try, failed (attempts run out or endpoint gone), delivered', (t) => {
  t.like(deliveryStatusOf(NOT_TRIED), { state: 'pending', text: 'Pending', nextAttemptAt: null });
  t.like(deliveryStatusOf(RETRYING), {
    state: 'retrying',
    text: 'Retrying',
    nextAttemptAt: Date.parse('2026-12-01T06:31:24.695Z'),
  });
  t.like(deliveryStatusOf(GAVE_UP), { state: 'failed', text: 'Failed', why: 'gave up after 10 attempts' });
  t.like(deliveryStatusOf(LAST_ATTEMPT_FAILED), { state: 'failed', text: 'Failed', why: 'gave up after 10 attempts' });
  t.like(deliveryStatusOf(ENDPOINT_GONE), { state: 'failed', text: 'Failed', why: 'endpoint deleted' });
  t.like(deliveryStatusOf(DELIVERED), { state: 'delivered', text: 'Delivered', nextAttemptAt: null });
  // Resent after it was delivered: waiting for the resend, not retrying a failure.
  const resent = { ...DELIVERED, status: 'pending' as const, nextAttemptAt: Date.parse('2026-12-01T07:00:00.000Z') };
  t.like(deliveryStatusOf(resent), { state: 'pending', nextAttemptAt: Date.parse('2026-12-01T07:00:00.000Z') });
});

/** The badges' words of a page's HTML. */
const badges = (html: string) =>
  [...html.matchAll(/<span class="badge badge-(\w+)">([^<]*)<\/span>/g)].map((m) => `${m[1]} ${m[2]}`);

const ctx = { state: { timeZone: 'UTC', csrfToken: 'csrf' } } as unknown as DashboardContext;
const endpointPage = async (d: WebhookDeliveryDoc) =>
  String(await DeliveriesCard({ ctx, endpoint: { id: 'ep_1' } as WebhookEndpointDoc, deliveries: [d] }));
const sessionPage = async (d: WebhookDeliveryDoc) =>
  String(
    await DetailBody({
      detail: { session: sessionAfter(), timeline: [], deliveries: [d], endpoints: new Map(), networks: [] },
      csrf: 'x',
      canManage: false,
      form: {},
      timeZone: 'UTC',
    }),
  );

const homePage = async (d: WebhookDeliveryDoc) =>
  String(await WebhookFailures({ deliveries: [d], endpoints: new Map(), timeZone: 'UTC' }));

for (const [page, render] of [
  ['webhook endpoint', endpointPage],
  ['checkout session', sessionPage],
  ['Home', homePage],
] as const) {
  test(`the ${page} page never calls a delivery that gave up pending: failed says why, retrying says when next`, async (t) => {
    const gaveUp = await render(LAST_ATTEMPT_FAILED);
    t.true(badges(gaveUp).includes('danger Failed'), badges(gaveUp).join(', '));
    t.false(badges(gaveUp).some((b) => b.endsWith('Pending')));
    t.regex(gaveUp, /gave up after 10 attempts/);
    t.notRegex(gaveUp, /next try/);

    const gone = await render(ENDPOINT_GONE);
    t.true(badges(gone).includes('danger Failed'));
    t.regex(gone, /endpoint deleted/);

    const retrying = await render(RETRYING);
    t.true(badges(retrying).includes('warning Retrying'));
    t.regex(retrying, /next try <time datetime="2026-12-01T06:31:24.695Z">/);

    t.true(badges(await render(NOT_TRIED)).includes('info Pending'));
    t.true(badges(await render(DELIVERED)).includes('success Delivered'));
  });
}
