import test from 'ava';
import { startTestWeir } from '../support/weir-harness.ts';

test('the address the start-up log names opens the dashboard: GET and HEAD / redirect there; other methods stay 404', async (t) => {
  const weir = await startTestWeir(t);
  for (const method of ['GET', 'HEAD']) {
    const r = await fetch(`${weir.url}/`, { method, redirect: 'manual' });
    t.is(r.status, 302, method);
    t.is(r.headers.get('location'), '/dashboard', method);
  }
  const followed = await fetch(`${weir.url}/`);
  t.is(followed.status, 200);
  t.regex(followed.url, /\/dashboard\/(setup|login)/);
  t.is((await fetch(`${weir.url}/`, { method: 'POST' })).status, 404);
});
