import test from 'ava';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataDirInUseError, lockDataDir, SERVE_LOCK_FILE } from '../../src/app/data-dir.ts';
import { startWeir } from '../../src/app/start-weir.ts';
import { eventually } from '../support/api-client.ts';
import { recordingMailer } from '../support/recording-mailer.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';
import { ADMIN_TOKEN, createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';
import { spawnWeir } from '../support/weir-process.ts';
import { payInFull, type Session } from '../api/helpers.ts';

const VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

type Line = Record<string, unknown> & { level: number; msg: string; event?: string; component?: string };

/** Who the customer is: none of it may reach a log line. */
const CUSTOMER = {
  email: 'grace.logcheck@example.org',
  name: 'Grace Logcheck-Hopperton',
  phone: '+15551234987',
  address: {
    line1: '42 Quietlog Street',
    line2: 'Apartment 7Q',
    city: 'Privatetown',
    state: 'Secretshire',
    postalCode: '90210-LOG',
    country: 'US',
  },
};

test('a full run logs every payment, session change, webhook attempt and request as JSON lines, and not one secret, key or customer detail', async (t) => {
  const masterKey = randomBytes(32).toString('base64');
  const lines: string[] = [];
  const { mailer, sent } = recordingMailer();
  const weir = await startTestWeir(t, { masterKey }, { mailer, log: (line) => lines.push(line) });
  const { api, organizationId, testSecretKey, liveSecretKey } = await createMerchant(weir.url, 'Logged Shop');

  const receiver = await startWebhookReceiver();
  t.teardown(() => receiver.close());
  const endpoint = await api.post<{ id: string; secret: string }>('/api/v1/webhook-endpoints', {
    description: 'logs',
    url: `${receiver.url}?token=receiver-query-token-123`,
    enabledEvents: { events: ['checkout_session.completed'] },
  });
  t.is(endpoint.status, 200, JSON.stringify(endpoint.body));
  const webhookSecret = endpoint.body.secret;
  t.true(webhookSecret.length > 10);

  const customer = await api.post<{ id: string }>('/api/v1/customers', CUSTOMER);
  t.is(customer.status, 200, JSON.stringify(customer.body));
  const created = await api.post<Session>('/api/v1/checkout/sessions', {
    ...sessionRequest(),
    customerId: customer.body.id,
  });
  t.is(created.status, 200, JSON.stringify(created.body));
  const session = await payInFull(weir, api, created.body);
  await receiver.waitFor((all) => all.length >= 1);

  // An invoice mailed to the customer.
  const invoice = await api.post<{ id: string }>('/api/v1/invoices', {
    customerId: customer.body.id,
    lineItems: sessionRequest().lineItems,
  });
  t.is(invoice.status, 200, JSON.stringify(invoice.body));
  const mailed = await api.post(`/api/v1/invoices/${invoice.body.id}/send`, {});
  t.is(mailed.status, 200, JSON.stringify(mailed.body));
  await eventually(async () => sent[0], 'the invoice mail');
  t.is(sent[0]!.to, CUSTOMER.email);

  // Request ids: a sane one is taken and echoed; anything else is replaced by a new one.
  const given = await fetch(`${weir.url}/api/v1/customers?email=${encodeURIComponent(CUSTOMER.email)}`, {
    headers: { authorization: `Bearer ${testSecretKey}`, 'x-request-id': 'client-req-0001' },
  });
  t.is(given.status, 200);
  t.is(given.headers.get('x-request-id'), 'client-req-0001');
  const odd = await fetch(`${weir.url}/health`, { headers: { 'x-request-id': `bad id ${'x'.repeat(200)}` } });
  const generated = odd.headers.get('x-request-id') ?? '';
  t.regex(generated, /^[0-9a-f-]{36}$/);
  const refused = await fetch(`${weir.url}/api/v1/customers`, { headers: { authorization: 'Bearer sk_test_nope' } });
  t.is(refused.status, 401);
  const adminGet = await fetch(`${weir.url}/admin/organizations`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  t.truthy(adminGet.headers.get('x-request-id'));

  await eventually(
    async () => (lines.some((l) => l.includes('"webhook.attempt"')) ? true : undefined),
    'the webhook attempt line',
  );
  await eventually(
    async () => (lines.some((l) => l.includes('"invoice.sent"')) ? true : undefined),
    'the invoice.sent line',
  );
  await weir.stop();

  const parsed = lines.map((line) => JSON.parse(line) as Line);
  const all = lines.join('\n');
  const secrets: Record<string, string> = {
    'test API key': testSecretKey,
    'live API key': liveSecretKey,
    'webhook secret': webhookSecret,
    'admin token': ADMIN_TOKEN,
    'master key': masterKey,
    'customer email': CUSTOMER.email,
    'customer email (query-encoded)': encodeURIComponent(CUSTOMER.email),
    'customer name': CUSTOMER.name,
    'customer phone': CUSTOMER.phone,
    'customer address line1': CUSTOMER.address.line1,
    'customer address line2': CUSTOMER.address.line2,
    'customer city': CUSTOMER.address.city,
    'customer state': CUSTOMER.address.state,
    'customer postal code': CUSTOMER.address.postalCode,
    'the webhook URL query token': 'receiver-query-token-123',
  };
  for (const [what, value] of Object.entries(secrets)) t.false(all.includes(value), `the ${what} is in the log`);
  t.false(/authorization/i.test(all), 'no Authorization header');
  t.false(/sk_(test|live)_/.test(all), 'no API key');

  const find = (event: string, match: (line: Line) => boolean = () => true) =>
    parsed.find((line) => line.event === event && match(line));
  const ofSession = (line: Line) => line.sessionId === session.id && line.organizationId === organizationId;
  const detected = find('payment.detected', ofSession);
  t.like(detected, { environment: 'test', network: 'weir-testnet' });
  t.regex(String(detected?.txHash), /^0x[0-9a-f]{64}$/);
  t.is(typeof detected?.amount, 'string');
  t.truthy(find('payment.confirmed', ofSession));
  t.like(find('checkout_session.completed', ofSession), { environment: 'test' });
  t.truthy(find('checkout_session.created', ofSession));
  const attempt = find('webhook.attempt');
  t.like(attempt, {
    endpointId: endpoint.body.id,
    eventType: 'checkout_session.completed',
    statusCode: 200,
    outcome: 'succeeded',
    attempt: 1,
  });
  t.is(typeof attempt?.durationMs, 'number');
  t.like(
    find('invoice.sent', (l) => l.invoiceId === invoice.body.id),
    { mailed: true },
  );
  t.truthy(find('invoice.finalized', (l) => l.invoiceId === invoice.body.id));

  const request = find('http.request', (l) => l.requestId === 'client-req-0001');
  t.like(request, { method: 'GET', path: '/api/v1/customers', status: 200, component: 'http' });
  t.is(typeof request?.ms, 'number');
  t.like(
    find('http.request', (l) => l.requestId === generated),
    { path: '/health' },
  );
  t.like(
    find('http.request', (l) => l.status === 401),
    { path: '/api/v1/customers' },
  );
  t.false(all.includes('?'), 'no query string');

  t.like(find('weir.started'), { version: VERSION, dataDir: weir.dataDir, port: weir.port });
  t.deepEqual(find('weir.started')?.networks, ['weir-testnet']);
  t.like(find('weir.stopped'), { dataDir: weir.dataDir, port: weir.port });
  t.is(parsed.at(-1)?.event, 'weir.stopped', 'the last line says it stopped');
});

test('weir serve: JSON lines on stdout by default; --log-pretty prints readable lines; WEIR_LOG_LEVEL=warn leaves the info lines out', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'weir-logs-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));

  const json = await spawnWeir({ dataDir });
  const answered = await fetch(`${json.url}/health`, { headers: { 'x-request-id': 'from-the-test' } });
  t.is(answered.headers.get('x-request-id'), 'from-the-test');
  await eventually(async () => (json.output().includes('from-the-test') ? true : undefined), 'the request line');
  await json.kill('SIGTERM');
  const jsonLines = json
    .output()
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Line);
  t.truthy(jsonLines.find((l) => l.event === 'weir.started' && l.dataDir === dataDir));
  t.truthy(jsonLines.find((l) => l.event === 'http.request' && l.requestId === 'from-the-test' && l.status === 200));
  t.is(jsonLines.at(-1)?.event, 'weir.stopped');

  const pretty = await spawnWeir({ dataDir, args: ['--log-pretty'] });
  await pretty.kill('SIGTERM');
  t.regex(pretty.output(), /INFO: weir \S+ listening on http:\/\/127\.0\.0\.1:\d+ \{"event":"weir\.started"/);
  t.regex(pretty.output(), /INFO: \[matcher\] handling the chain messages of /);
  t.false(pretty.output().trimStart().startsWith('{'), pretty.output());

  const quiet = await spawnWeir({ dataDir, env: { WEIR_LOG_LEVEL: 'warn' } });
  await fetch(`${quiet.url}/health`);
  await quiet.kill('SIGTERM');
  t.false(quiet.output().includes('"weir.started"'), quiet.output());
  t.false(quiet.output().includes('"http.request"'), quiet.output());
});

test("the data dir lock's lines carry their event: a stale lock taken over (data_dir.lock_taken_over), a held one refused (data_dir.in_use, error) before the process exits", async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'weir-lock-logs-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  // A pid no process holds: a weir serve killed with -9 left its lock.
  const gone = 2 ** 22 + 1;
  await writeFile(join(dataDir, SERVE_LOCK_FILE), `${gone}\n`);
  const lines: Line[] = [];
  const weir = await startTestWeir(t, { dataDir }, { log: (line) => lines.push(JSON.parse(line) as Line) });
  t.like(
    lines.find((line) => line.event === 'data_dir.lock_taken_over'),
    { level: 30, component: 'weir', dataDir, stalePid: gone, lockFile: join(dataDir, SERVE_LOCK_FILE) },
    JSON.stringify(lines.slice(0, 5)),
  );
  await weir.stop();

  const release = await lockDataDir(dataDir, () => {});
  t.teardown(release);
  const refused: Line[] = [];
  await t.throwsAsync(
    startWeir(
      { port: 0, host: '127.0.0.1', dataDir, chainEnv: {} },
      { log: (line) => refused.push(JSON.parse(line) as Line) },
    ),
    { instanceOf: DataDirInUseError },
  );
  t.like(refused.at(-1), { level: 50, event: 'data_dir.in_use', dataDir, heldBy: process.pid });
  t.regex(refused.at(-1)!.msg, /^another weir serve \(pid \d+\) is using the data dir /);
});
