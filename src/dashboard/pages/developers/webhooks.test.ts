import test from 'ava';
import type { WebhookDeliveryDoc, WebhookEndpointDoc } from '../../../projections/collections.ts';
import type { DashboardContext } from '../../context.ts';
import { DeliveriesCard, offeredEventTypes, SigningSecretCard, sinceFirst, TestSent } from './webhooks.tsx';

const ctx = { state: { timeZone: 'UTC', csrfToken: 'csrf' } } as unknown as DashboardContext;
const endpoint = { id: 'ep_1' } as WebhookEndpointDoc;

const delivery = (over: Partial<WebhookDeliveryDoc>): WebhookDeliveryDoc =>
  ({
    id: 'dl_1',
    endpointId: 'ep_1',
    eventId: 'evt_7f91ac47',
    eventType: 'checkout_session.completed',
    createdAt: '2026-12-01T06:29:54.695Z',
    status: 'pending',
    attempts: 2,
    nextAttemptAt: Date.parse('2026-12-01T06:31:24.695Z'),
    log: [
      { attempt: 1, at: '2026-12-01T06:29:54.702Z', statusCode: 500, error: 'receiver answered 500', durationMs: 3 },
      { attempt: 2, at: '2026-12-01T06:30:24.900Z', statusCode: 500, error: 'receiver answered 500', durationMs: 2 },
    ],
    resends: [],
    ...over,
  }) as WebhookDeliveryDoc;

const render = async (d: WebhookDeliveryDoc) => String(await DeliveriesCard({ ctx, endpoint, deliveries: [d] }));

test('a delivery waiting for a retry says when the next try is, and every delivery names the event id a receiver dedupes on', async (t) => {
  const html = await render(delivery({}));
  t.regex(html, /next try <time datetime="2026-12-01T06:31:24.695Z">/);
  t.regex(html, /Event <code>evt_7f91ac47<\/code> \(its x-webhook-id header/);
  const done = await render(delivery({ status: 'succeeded', nextAttemptAt: null }));
  t.notRegex(done, /next try/);
  t.regex(done, /evt_7f91ac47/);
});

test('a canceled delivery says why and when it stopped; one resent since, and delivered, shows delivered, the cancel said as past', async (t) => {
  const canceled = delivery({
    status: 'canceled',
    nextAttemptAt: null,
    canceled: { at: '2026-12-01T06:31:44.440Z', reason: 'endpoint_disabled' },
  });
  const html = await render(canceled);
  t.regex(html, /Canceled: the endpoint was disabled, <\/span><time datetime="2026-12-01T06:31:44.440Z">/);
  t.notRegex(html, /next try/);
  const delivered = await render({ ...canceled, status: 'succeeded', resends: [{ at: '', by: 'user:u', attempt: 3 }] });
  t.notRegex(delivered, /Canceled:/);
  t.regex(delivered, /Delivered/);
  t.regex(
    delivered,
    /Was canceled \(the endpoint was disabled, <\/span><time datetime="2026-12-01T06:31:44.440Z">.*\), then resent\./,
    'the cancel kept as history',
  );
  t.notRegex(await render(delivery({ status: 'succeeded' })), /canceled/i, 'nothing of a cancel that never was');
});

test('each retry says how long after the first attempt it came, since the times show only the minute', async (t) => {
  t.is(sinceFirst('2026-12-01T06:29:54.702Z', '2026-12-01T06:30:24.900Z'), '+30 s');
  t.is(sinceFirst('2026-12-01T06:29:54.000Z', '2026-12-01T06:31:24.000Z'), '+1 m 30 s');
  t.is(sinceFirst('2026-12-01T06:00:00.000Z', '2026-12-01T10:15:30.000Z'), '+4 h 15 m 30 s');
  t.is(sinceFirst('2026-12-01T06:00:00.000Z', '2026-12-01T06:00:00.200Z'), '+0 s');
  const html = await render(delivery({}));
  t.notRegex(html, /06:29<\/span><span class="tz"> UTC<\/span><\/time><span class="muted">/, 'not on the first');
  t.regex(html, /<span class="muted"> \(\+30 s\)<\/span>/);
});

const signedIn = { state: { ...ctx.state, user: { twoFactorEnabled: false } } } as unknown as DashboardContext;

test('the signing secret card offers how long the old secret stays valid on regenerate, and says until when while it does', async (t) => {
  const card = (over: Partial<WebhookEndpointDoc>, nowMs: number) =>
    String(
      SigningSecretCard({
        ctx: signedIn,
        endpoint: { ...endpoint, ...over } as WebhookEndpointDoc,
        secret: undefined,
        nowMs,
      }),
    );
  const plain = card({}, Date.parse('2026-12-01T07:00:00Z'));
  t.regex(plain, /<select[^>]*name="previousSecretExpiresInSeconds"/);
  for (const [value, label] of [
    ['0', 'Now'],
    ['3600', '1 hour'],
    ['86400', '24 hours'],
  ])
    t.regex(plain, new RegExp(`<option value="${value}"[^>]*>${label}`));
  t.regex(plain, /<option value="0" selected/, 'at once unless chosen, as the API without a body');
  t.notRegex(plain, /previous-secret-expiry/);

  const overlapping = { previousSealedSecret: 'sealed-old', previousSecretExpiresAt: '2026-12-01T08:00:00.000Z' };
  const during = card(overlapping, Date.parse('2026-12-01T07:00:00Z'));
  t.regex(during, /id="previous-secret-expiry"[\s\S]*until[\s\S]*2026[\s\S]*08:00/);
  t.notRegex(card(overlapping, Date.parse('2026-12-01T08:00:00Z')), /previous-secret-expiry/, 'gone once expired');
});

test('after Send test event, the message links to the test delivery in the log, by the id the API answered (only an id of its form)', (t) => {
  const id = '0b7e3c52-9a4f-5d1e-8c2b-6f0a1d2e3b4c';
  const sent = (query: Record<string, string>) =>
    String(TestSent({ ctx: { ...ctx, query } as unknown as DashboardContext }));
  t.regex(
    sent({ done: 'test', delivery: id }),
    new RegExp(`Test event \\(webhook_endpoint.test\\) sent: .*<a href="#delivery-${id}"`),
  );
  const bad = sent({ done: 'test', delivery: '"><script>x</script>' });
  t.regex(bad, /sent: .*see it under Deliveries/);
  t.notRegex(bad, /<a |script/);
  t.is(sent({ done: 'saved', delivery: id }), '');
});

test('the events form offers a failed payment intent once, by the reference name, noting the specification’s; the specification’s name only to an endpoint that lists it, so saving keeps it', (t) => {
  const offered = offeredEventTypes(['*']);
  t.true(offered.includes('payment_intent.payment_failed'));
  t.false(offered.includes('payment_intent.failed'));
  t.true(offeredEventTypes(['payment_intent.failed']).includes('payment_intent.failed'));
});
