import { randomBytes } from 'node:crypto';
import test from 'ava';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { startNatsServer, type NatsServerHandle } from '../../test/support/nats-server.ts';
import { openKvBucket } from './nats-kv.ts';
import { agreeOnKeys, secretKeyFingerprint } from './shared-keys.ts';
import { SettingError } from '../shared/setting-error.ts';

let server: NatsServerHandle | undefined;
let nc: NatsConnection | undefined;
test.before(async () => {
  server = await startNatsServer();
  nc = await connect({ servers: server.url });
});
test.after.always(async () => {
  await nc?.close();
  await server?.stop();
});

test('instances with the same keys start; one with another master key is refused, naming the setting', async (t) => {
  const bucket = await openKvBucket(nc!, { name: 'keys-agree' });
  const key = randomBytes(32);
  const keys = [
    { setting: 'WEIR_MASTER_KEY', fingerprint: secretKeyFingerprint(key) },
    { setting: 'WEIR_AUDIT_KEY', fingerprint: 'abc' },
  ];
  await agreeOnKeys(bucket, keys);
  await agreeOnKeys(bucket, keys);
  const other = secretKeyFingerprint(randomBytes(32));
  const refused = await t.throwsAsync(agreeOnKeys(bucket, [{ setting: 'WEIR_MASTER_KEY', fingerprint: other }]), {
    instanceOf: SettingError,
  });
  t.regex(refused?.message ?? '', /WEIR_MASTER_KEY differs .* give every instance the same WEIR_MASTER_KEY/);
  t.false((refused?.message ?? '').includes(key.toString('base64')), 'the key itself is never in the message');
});

test('two instances starting at once with different keys: exactly one is refused', async (t) => {
  const bucket = await openKvBucket(nc!, { name: 'keys-race' });
  const results = await Promise.allSettled(
    ['a', 'b'].map((fingerprint) => agreeOnKeys(bucket, [{ setting: 'WEIR_MASTER_KEY', fingerprint }])),
  );
  t.deepEqual(results.map((r) => r.status).sort(), ['fulfilled', 'rejected']);
});
