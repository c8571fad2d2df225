import test from 'ava';
import { createManualClock } from '../../src/shared/clock.ts';
import { apiClient, eventually } from '../support/api-client.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';
import { createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';

type Session = { id: string; status: string; expiresAt: string; paymentIntent: { status: string } };

test('a session expires one hour after creation by default, and checkout_session.expired is delivered', async (t) => {
  const receiver = await startWebhookReceiver();
  t.teardown(() => receiver.close());
  const clock = createManualClock(Date.parse('2026-05-01T08:00:00Z'));
  const weir = await startTestWeir(t, {}, { clock });
  const { api } = await createMerchant(weir.url);
  await api.post('/api/v1/webhook-endpoints', { description: 'd', url: receiver.url, enabledEvents: { events: ['checkout_session.expired'] } });
  const session = (await api.post<Session>('/api/v1/checkout/sessions', sessionRequest())).body;
  t.is(session.expiresAt, '2026-05-01T09:00:00.000Z');

  clock.set(Date.parse('2026-05-01T08:59:59.999Z'));
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.is((await api.get<Session>(`/api/v1/checkout/sessions/${session.id}`)).body.status, 'open');

  clock.set(Date.parse('2026-05-01T09:00:00.000Z'));
  const expired = await eventually(async () => {
    const s = (await api.get<Session>(`/api/v1/checkout/sessions/${session.id}`)).body;
    return s.status === 'expired' ? s : undefined;
  }, 'the session to expire');
  t.is(expired.paymentIntent.status, 'canceled');
  const [hook] = await receiver.waitFor((all) => all.length === 1);
  t.is((JSON.parse(hook!.body) as { type: string }).type, 'checkout_session.expired');
});

test('the expiry timer is durable: a session whose expiry passed while Weir was down expires at start', async (t) => {
  const clock = createManualClock(Date.parse('2026-05-01T08:00:00Z'));
  const first = await startTestWeir(t, {}, { clock });
  const { api, testSecretKey } = await createMerchant(first.url);
  const session = (await api.post<Session>('/api/v1/checkout/sessions', { ...sessionRequest(), expiresAt: '2026-05-01T08:30:00Z' })).body;
  await first.stop();

  clock.set(Date.parse('2026-05-01T10:00:00Z'));
  const second = await startTestWeir(t, { dataDir: first.dataDir }, { clock });
  const again = apiClient(second.url, testSecretKey);
  const expired = await eventually(async () => {
    const s = (await again.get<Session>(`/api/v1/checkout/sessions/${session.id}`)).body;
    return s.status === 'expired' ? s : undefined;
  }, 'the session to expire after restart');
  t.is(expired.id, session.id);
});

test('expiresAt is validated: past, too soon, too far, malformed', async (t) => {
  const clock = createManualClock(Date.parse('2026-05-01T08:00:00Z'));
  const weir = await startTestWeir(t, {}, { clock });
  const { api } = await createMerchant(weir.url);
  for (const expiresAt of ['2026-05-01T07:00:00Z', '2026-05-01T08:00:30Z', '2026-07-01T00:00:00Z', 'tomorrow']) {
    const r = await api.post<{ message: string; statusCode: number }>('/api/v1/checkout/sessions', { ...sessionRequest(), expiresAt });
    t.is(r.status, 400, expiresAt);
    t.regex(r.body.message, /^expiresAt/);
  }
});
