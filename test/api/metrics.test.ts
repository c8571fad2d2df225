import { readFile } from 'node:fs/promises';
import test from 'ava';
import { ADMIN_TOKEN, startTestWeir } from '../support/weir-harness.ts';
import { parseMetrics } from '../support/metrics-scrape.ts';

const metricsOf = (port: number, headers: Record<string, string> = {}, method = 'GET') =>
  fetch(`http://127.0.0.1:${port}/metrics`, { method, headers });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

test('on loopback, /metrics answers anyone in the Prometheus text format; HEAD too, other methods are a 405', async (t) => {
  const weir = await startTestWeir(t);
  const answer = await metricsOf(weir.port);
  t.is(answer.status, 200);
  t.is(answer.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
  t.is(answer.headers.get('cache-control'), 'no-store');
  const scrape = parseMetrics(await answer.text());
  t.is(scrape.families.get('weir_http_request_duration_seconds'), 'histogram');
  t.is(scrape.families.get('process_cpu_seconds_total'), 'counter', "the process's own figures come along");
  t.is((await metricsOf(weir.port, {}, 'HEAD')).status, 200);
  const post = await metricsOf(weir.port, {}, 'POST');
  t.is(post.status, 405);
  t.is(post.headers.get('allow'), 'GET, HEAD');
});

test('listening beyond loopback, /metrics needs the admin token: 401 without it or with another one', async (t) => {
  const weir = await startTestWeir(t, { host: '0.0.0.0' });
  const without = await metricsOf(weir.port);
  t.is(without.status, 401);
  t.is(((await without.json()) as { code: string }).code, 'authentication_required');
  t.is((await metricsOf(weir.port, bearer('not-the-admin-token'))).status, 401);
  const scraped = await metricsOf(weir.port, bearer(ADMIN_TOKEN));
  t.is(scraped.status, 200);
  t.true(parseMetrics(await scraped.text()).families.has('weir_events_appended_total'));
});

test('listening beyond loopback without an admin token set, /metrics is refused (403) and says what to set', async (t) => {
  const weir = await startTestWeir(t, { host: '0.0.0.0', adminToken: undefined });
  const refused = await metricsOf(weir.port, bearer('anything'));
  t.is(refused.status, 403);
  const body = (await refused.json()) as { code: string; message: string };
  t.is(body.code, 'metrics_need_admin_token');
  t.regex(body.message, /WEIR_ADMIN_TOKEN/);
});

test('on loopback behind a reverse proxy (WEIR_TRUST_PROXY), /metrics needs the admin token too', async (t) => {
  const weir = await startTestWeir(t, { trustProxy: true });
  t.is((await metricsOf(weir.port)).status, 401);
  t.is((await metricsOf(weir.port, bearer(ADMIN_TOKEN))).status, 200);
});

test('/metrics refuses a query parameter (400 naming it) as every operator route does, after its own auth beyond loopback', async (t) => {
  const typo = (port: number, headers: Record<string, string> = {}) =>
    fetch(`http://127.0.0.1:${port}/metrics?name[]=weir_events_appended_total`, { headers });
  const local = await startTestWeir(t);
  const refused = await typo(local.port);
  t.is(refused.status, 400);
  t.like(await refused.json(), {
    code: 'parameter_invalid',
    message: 'name[]: is not a known parameter; this route takes none',
  });
  const beyond = await startTestWeir(t, { host: '0.0.0.0' });
  t.is((await typo(beyond.port)).status, 401, 'who asks is settled first');
  t.is((await typo(beyond.port, bearer(ADMIN_TOKEN))).status, 400);
  t.is((await metricsOf(beyond.port, bearer(ADMIN_TOKEN))).status, 200, 'without one it answers');
});

test('the Grafana dashboard charts only families Weir exports, and every weir_ family is on it', async (t) => {
  const weir = await startTestWeir(t);
  const exported = parseMetrics(await (await metricsOf(weir.port)).text()).families;
  const dashboard = JSON.parse(await readFile(new URL('../../deploy/grafana/weir.json', import.meta.url), 'utf8')) as {
    panels: { title: string; targets?: { expr: string }[] }[];
  };
  const charted = new Set<string>();
  for (const panel of dashboard.panels)
    for (const { expr } of panel.targets ?? [])
      for (const [name] of expr.matchAll(/\b(?:weir|process|nodejs)_[a-z0-9_]+/g))
        charted.add(name.replace(/_(bucket|count|sum)$/, ''));
  for (const name of charted) t.true(exported.has(name), `${name} is charted but not exported`);
  for (const name of exported.keys()) if (name.startsWith('weir_')) t.true(charted.has(name), `${name} is not charted`);
});
