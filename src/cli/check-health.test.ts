import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import test, { type ExecutionContext } from 'ava';
import { findFreePort } from '../../test/support/free-port.ts';
import { checkHealth, healthUrlProblem } from './check-health.ts';

/** A server that answers /health with `status` and `body`, or never answers ('hang'). */
async function healthServer(t: ExecutionContext, answer: { status: number; body: string } | 'hang'): Promise<string> {
  const server: Server = createServer((req, res) => {
    if (answer === 'hang') return;
    res.writeHead(req.url === '/health' ? answer.status : 404, { 'content-type': 'application/json' }).end(answer.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const report = (status: string) => JSON.stringify({ status, position: '1', head: '1', checks: [] });

test('ok and degraded exit 0, failing exits 1; the report is passed on either way', async (t) => {
  const ok = await checkHealth(await healthServer(t, { status: 200, body: report('ok') }));
  t.like(ok, { exitCode: 0, report: { status: 'ok' }, problem: null });
  const degraded = await checkHealth(`${await healthServer(t, { status: 200, body: report('degraded') })}/`);
  t.like(degraded, { exitCode: 0, report: { status: 'degraded' }, problem: 'degraded: see the checks' });
  const failing = await checkHealth(await healthServer(t, { status: 503, body: report('failing') }));
  t.like(failing, { exitCode: 1, report: { status: 'failing' }, problem: 'failing: see the checks' });
});

test('no server, no answer in time, or an answer that is no health report exits 1 and says which', async (t) => {
  const closed = `http://127.0.0.1:${await findFreePort()}`;
  t.like(await checkHealth(closed), {
    exitCode: 1,
    report: null,
    problem: `${closed}/health: no answer (is weir serve running there?)`,
  });
  const hanging = await healthServer(t, 'hang');
  t.like(await checkHealth(hanging, 50), { exitCode: 1, problem: `${hanging}/health: no answer within 50 ms` });
  const other = await healthServer(t, { status: 500, body: 'Internal Server Error' });
  t.like(await checkHealth(other), { exitCode: 1, problem: `${other}/health answered 500 without a health report` });
  const strange = await healthServer(t, { status: 200, body: '{"status":"fine"}' });
  t.like(await checkHealth(strange), {
    exitCode: 1,
    report: null,
    problem: `${strange}/health answered 200 without a health report`,
  });
});

test('a URL holding a user and password is never shown with its password', async (t) => {
  const port = await findFreePort();
  const result = await checkHealth(`http://u:secret@127.0.0.1:${port}`);
  t.is(result.exitCode, 1);
  t.is(result.problem, `http://***@127.0.0.1:${port}/health: no answer (is weir serve running there?)`);
});

test('a --url that is no http(s) URL, or that holds a user or password (fetch refuses it; /health asks for none), is refused without its password', (t) => {
  t.is(healthUrlProblem('http://127.0.0.1:8080'), null);
  t.is(healthUrlProblem('https://weir.example/'), null);
  t.is(
    healthUrlProblem('127.0.0.1:8080'),
    '--url must be an http:// or https:// URL (http://127.0.0.1:8080), got 127.0.0.1:8080',
  );
  for (const url of ['http://u:secret@127.0.0.1:8080', 'http://:secret@127.0.0.1:8080', 'http://u@127.0.0.1:8080'])
    t.is(
      healthUrlProblem(url),
      '--url must not hold a user or password (/health asks for none), got http://***@127.0.0.1:8080',
    );
  t.regex(healthUrlProblem('ftp://u:secret@127.0.0.1:8080') ?? '', /got ftp:\/\/\*\*\*@127\.0\.0\.1:8080$/);
});
