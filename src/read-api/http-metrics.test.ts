import test from 'ava';
import { metricsAccess } from './http-metrics.ts';

test('/metrics is open only on loopback with no proxy in front; any other bind address needs the operator', (t) => {
  for (const host of ['127.0.0.1', '127.0.0.53', '::1', 'localhost', 'LOCALHOST', '::ffff:127.0.0.1'])
    t.is(metricsAccess({ host }), 'anyone', host);
  for (const host of ['0.0.0.0', '::', '10.0.0.5', '192.168.1.20', 'weir.example', 'fe80::1'])
    t.is(metricsAccess({ host }), 'operator', host);
  t.is(metricsAccess({ host: '127.0.0.1', trustProxy: true }), 'operator', 'a proxy makes loopback public');
});
