import type { LookupAddress } from 'node:dns';
import test from 'ava';
import { startWebhookReceiver } from '../../test/support/webhook-receiver.ts';
import { createHttpWebhookSender } from './webhook-sender.ts';
import {
  checkWebhookTarget,
  guardedLookup,
  internalAddressKind,
  type Resolver,
  WebhookTargetRefusedError,
  webhookTargetPolicy,
} from './webhook-target.ts';

const liveOnlyPublic = webhookTargetPolicy(['test']);

/** A resolver that answers from a table (no DNS traffic), as a name server an attacker controls would. */
const resolverOf =
  (table: Record<string, string[]>): Resolver =>
  (hostname, _options, callback) => {
    const addresses = table[hostname];
    if (!addresses) return callback(Object.assign(new Error(`${hostname} not found`), { code: 'ENOTFOUND' }), []);
    callback(
      null,
      addresses.map((address): LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 })),
    );
  };

test('internal addresses are named by their kind; public ones are not', (t) => {
  const internal: [string, string][] = [
    ['127.0.0.1', 'loopback'],
    ['127.0.0.53', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'linkLocal'],
    ['fd00:ec2::254', 'uniqueLocal'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
  ];
  for (const [address, kind] of internal) t.is(internalAddressKind(address), kind, address);
  for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111']) t.is(internalAddressKind(address), null);
});

test('a live endpoint URL that names an internal address in any spelling is refused; a test one is allowed', async (t) => {
  const spellings = [
    'http://127.0.0.1/x',
    'http://localhost:8080/x',
    'http://api.localhost/x',
    'http://0.0.0.0/x',
    'http://2130706433/x',
    'http://0x7f000001/x',
    'http://127.1/x',
    'http://[::1]/x',
    'http://[::ffff:127.0.0.1]/x',
    'http://169.254.169.254/latest/meta-data/',
    'http://10.0.0.7/x',
    'http://172.20.1.1/x',
    'http://192.168.0.10/x',
    'http://[fd12:3456::1]/x',
  ];
  for (const url of spellings) {
    await t.throwsAsync(
      checkWebhookTarget(url, 'live', liveOnlyPublic, resolverOf({})),
      { instanceOf: WebhookTargetRefusedError },
      url,
    );
    await t.notThrowsAsync(checkWebhookTarget(url, 'test', liveOnlyPublic, resolverOf({})), url);
  }
  // A name is resolved: refused when it points inside, accepted when public or not resolvable (checked at send).
  const dns = resolverOf({ 'inside.example': ['93.184.216.34', '10.0.0.9'], 'shop.example': ['93.184.216.34'] });
  await t.throwsAsync(checkWebhookTarget('https://inside.example/hooks', 'live', liveOnlyPublic, dns), {
    message: /inside\.example resolves to 10\.0\.0\.9, which is a private address/,
  });
  await t.notThrowsAsync(checkWebhookTarget('https://shop.example/hooks', 'live', liveOnlyPublic, dns));
  await t.notThrowsAsync(checkWebhookTarget('https://nowhere.example/hooks', 'live', liveOnlyPublic, dns));
  // The operator decides per environment.
  const none = webhookTargetPolicy([]);
  await t.throwsAsync(checkWebhookTarget('http://127.0.0.1/x', 'test', none, dns), {
    instanceOf: WebhookTargetRefusedError,
  });
  const both = webhookTargetPolicy(['test', 'live']);
  await t.notThrowsAsync(checkWebhookTarget('http://127.0.0.1/x', 'live', both, dns));
});

test('the lookup that connections use refuses a name resolving inside, so a rebinding name cannot pass', async (t) => {
  let answers = 0;
  // A rebinding name: public on the first look (at create), internal on the next (at send).
  const rebinding: Resolver = (hostname, options, callback) => {
    answers += 1;
    resolverOf({ [hostname]: [answers === 1 ? '93.184.216.34' : '127.0.0.1'] })(hostname, options, callback);
  };
  await t.notThrowsAsync(checkWebhookTarget('http://rebind.example/x', 'live', liveOnlyPublic, rebinding));
  const error = await new Promise<Error | null>((resolve) =>
    guardedLookup(rebinding)('rebind.example', {}, (e) => resolve(e)),
  );
  t.true(error instanceof WebhookTargetRefusedError);
  t.regex(error!.message, /rebind\.example resolves to 127\.0\.0\.1, which is a loopback address/);
});

test('at send time a live delivery to an internal address is a recorded failure, with no connection made', async (t) => {
  const receiver = await startWebhookReceiver();
  t.teardown(() => receiver.close());
  const port = new URL(receiver.url).port;
  const sender = createHttpWebhookSender({
    targets: liveOnlyPublic,
    resolve: resolverOf({ 'hooks.example': ['127.0.0.1'] }),
  });
  t.teardown(() => sender.close());
  const request = { body: '{}', secret: 's', eventId: 'e', nowMs: Date.now() };
  for (const url of [
    `http://127.0.0.1:${port}/hooks`,
    `http://localhost:${port}/hooks`,
    `http://hooks.example:${port}/hooks`,
  ]) {
    const outcome = await sender({ ...request, url, environment: 'live' });
    t.is(outcome.statusCode, null, url);
    t.regex(outcome.error!, /^request refused: .*loopback address/, url);
  }
  t.is(receiver.received.length, 0, 'nothing reached the receiver');
  // The test environment reaches it (merchants try receivers on their own machine).
  const allowed = await sender({ ...request, url: receiver.url, environment: 'test' });
  t.is(allowed.statusCode, 200);
  t.is(receiver.received.length, 1);
});

test('redirects are not followed: a 3xx is a failure naming the status', async (t) => {
  const receiver = await startWebhookReceiver(() => 302);
  t.teardown(() => receiver.close());
  const sender = createHttpWebhookSender();
  t.teardown(() => sender.close());
  const outcome = await sender({
    url: receiver.url,
    body: '{}',
    secret: 's',
    eventId: 'e',
    nowMs: 0,
    environment: 'test',
  });
  t.deepEqual([outcome.statusCode, outcome.error], [302, 'receiver answered 302']);
  t.is(receiver.received.length, 1);
});
