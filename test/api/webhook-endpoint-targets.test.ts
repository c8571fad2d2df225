import test from 'ava';
import { apiClient, eventually } from '../support/api-client.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';
import { createMerchant, startTestWeir } from '../support/weir-harness.ts';
import { assertRejectedWithoutWrite } from './helpers.ts';

const ENDPOINTS = '/api/v1/webhook-endpoints';
const INTERNAL = [
  'http://127.0.0.1:9000/x',
  'http://localhost/x',
  'http://0.0.0.0/x',
  'http://2130706433/x',
  'http://0x7f000001/x',
  'http://127.1/x',
  'http://[::1]/x',
  'http://169.254.169.254/latest/meta-data/',
  'http://10.0.0.1/x',
  'http://172.16.5.4/x',
  'http://192.168.1.20/x',
  'http://[fc00::1]/x',
];
const endpointBody = (url: string) => ({
  description: 'internal',
  url,
  enabledEvents: { events: ['checkout_session.completed'] },
});

test('live webhook endpoints may not point at loopback, private, link-local or metadata addresses: a 400 naming url at create and at update', async (t) => {
  const weir = await startTestWeir(t);
  const { live, api } = await createMerchant(weir.url);
  for (const url of INTERNAL) {
    await assertRejectedWithoutWrite(t, weir, () => live.post(ENDPOINTS, endpointBody(url)), {
      field: 'url',
      code: 'url_not_allowed',
    });
  }
  const endpoint = await live.post<{ id: string }>(ENDPOINTS, endpointBody('https://hooks.shop.example/weir'));
  t.is(endpoint.status, 200);
  for (const url of INTERNAL.slice(0, 4)) {
    await assertRejectedWithoutWrite(t, weir, () => live.put(`${ENDPOINTS}/${endpoint.body.id}`, { url }), {
      field: 'url',
      code: 'url_not_allowed',
    });
  }
  // The test environment may, by default: merchants try receivers on their own machine.
  for (const url of INTERNAL) t.is((await api.post(ENDPOINTS, endpointBody(url))).status, 200, url);
});

test('the operator decides per environment: none, or live too', async (t) => {
  const strict = await startTestWeir(t, { webhookInternalTargets: [] });
  const strictShop = await createMerchant(strict.url);
  const refused = await strictShop.api.post(ENDPOINTS, endpointBody('http://127.0.0.1:9000/x'));
  t.is(refused.status, 400);
  t.is((refused.body as { code: string }).code, 'url_not_allowed');

  const open = await startTestWeir(t, { webhookInternalTargets: ['test', 'live'] });
  const openShop = await createMerchant(open.url);
  t.is((await openShop.live.post(ENDPOINTS, endpointBody('http://127.0.0.1:9000/x'))).status, 200);
});

test('a live delivery to an internal address is refused when it is sent, recorded as a failed attempt, and nothing is sent there', async (t) => {
  const receiver = await startWebhookReceiver();
  t.teardown(() => receiver.close());
  // Created while the operator allowed internal targets in live, then Weir restarted without that.
  const before = await startTestWeir(t, { webhookInternalTargets: ['test', 'live'] });
  const { live, liveSecretKey } = await createMerchant(before.url);
  const endpoint = (await live.post<{ id: string }>(ENDPOINTS, endpointBody(receiver.url))).body;
  await before.stop();
  const after = await startTestWeir(t, { dataDir: before.dataDir });
  const liveApi = apiClient(after.url, liveSecretKey);
  t.is((await liveApi.post(`${ENDPOINTS}/${endpoint.id}/test`)).status, 200);
  type Delivery = { attempts: number; attemptLog: { statusCode: number | null; error: string | null }[] };
  const delivery = await eventually(async () => {
    const d = (await liveApi.get<{ data: Delivery[] }>(`${ENDPOINTS}/${endpoint.id}/deliveries`)).body.data[0];
    return d && d.attempts === 1 ? d : undefined;
  }, 'the first attempt to be recorded');
  t.is(delivery.attemptLog[0]!.statusCode, null);
  t.regex(delivery.attemptLog[0]!.error!, /^request refused: 127\.0\.0\.1 is a loopback address/);
  t.is(receiver.received.length, 0);
});
