import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { once } from 'node:events';
import { createServer, request, type Server } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { createWebSocketInspector } from '@statelyai/inspect';
import test, { type ExecutionContext } from 'ava';
import WebSocket from 'ws';
import { launchChromium } from '../../test/support/chromium.ts';
import { eventually } from '../../test/support/api-client.ts';
import { createLineLogger } from '../shared/logger.ts';
import { bridgePageUrl, bridgeSocketUrl, type InspectorBridge, startInspectorBridge } from './inspector-bridge.ts';
import { namingActors } from './machine-inspection.ts';

/** Log lines of the bridges started here, dropped unless a test looks. */
const quiet = createLineLogger(() => {});
/** The admin token the bridges here ask for: its characters need escaping in a URL. */
const TOKEN = 'op-token +/&=#é';

async function bridge(t: ExecutionContext, keep?: number, inspectorUrl?: string, logger = quiet) {
  const started = await startInspectorBridge({
    port: 0,
    logger,
    token: TOKEN,
    ...(keep ? { keep } : {}),
    ...(inspectorUrl ? { inspectorUrl } : {}),
  });
  t.teardown(() => started.stop());
  return started;
}

function get(port: number, host: string): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/', headers: { host } }, (res) => {
      let body = '';
      res.on('data', (chunk) => {
        body += String(chunk);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** A socket to the bridge with the token, as a page of `origin` (or a process: no Origin) opens it; its messages as they come. */
async function socketTo(started: InspectorBridge, origin?: string): Promise<{ socket: WebSocket; got: unknown[] }> {
  const socket = new WebSocket(bridgeSocketUrl(started.url, TOKEN), origin ? { origin } : {});
  const got: unknown[] = [];
  socket.on('message', (data) => got.push(JSON.parse(String(data))));
  await once(socket, 'open');
  return { socket, got };
}

/** The status a socket opened at `url` (from a page of `origin`, or a process) is refused with. */
function refusal(url: string, origin?: string): Promise<number> {
  const socket = new WebSocket(url, origin ? { origin } : {});
  return new Promise((resolve, reject) => {
    socket.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    socket.on('open', () => {
      socket.close();
      reject(new Error(`a socket to ${url} from ${origin ?? 'a process'} was taken`));
    });
  });
}

test('the bridge listens on loopback only, answers only its own host names, and its page runs no inline script and cannot be framed', async (t) => {
  const started = await bridge(t);
  const external = Object.values(networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal);
  if (external) {
    const socket = connect({ host: external.address, port: started.port });
    const [error] = (await once(socket, 'error')) as [NodeJS.ErrnoException];
    t.is(error.code, 'ECONNREFUSED', `nothing listens on ${external.address}`);
  } else t.log('no interface but loopback here: the listening address is checked alone');

  const page = await get(started.port, `localhost:${started.port}`);
  t.is(page.status, 200);
  const policy = String(page.headers['content-security-policy']);
  t.regex(policy, /script-src 'self'/);
  t.regex(policy, /frame-ancestors 'none'/);
  t.notRegex(policy, /unsafe-inline/);
  t.notRegex(page.body, /<script(?![^>]*\bsrc=)/, 'no inline script');
  t.regex(page.body, /src="https:\/\/stately\.ai\/inspect"/, 'it embeds the Stately inspector');

  t.is((await get(started.port, `rebound.example:${started.port}`)).status, 421, 'a rebound host name is refused');
});

test("weir inspect's page says it replays a record, not that it is live", async (t) => {
  const { port } = await bridge(t);
  const live = await get(port, `localhost:${port}`);
  t.regex(live.body, /<title>Weir: statecharts, live<\/title>/);
  const replay = await startInspectorBridge({ port: 0, logger: quiet, token: TOKEN, showing: 'replay' });
  t.teardown(() => replay.stop());
  const page = await get(replay.port, `localhost:${replay.port}`);
  t.regex(page.body, /<title>Weir: a statechart, replayed<\/title>/);
  t.regex(page.body, /<strong>Weir<\/strong>, a statechart, replayed:/);
  t.notRegex(page.body, /live/);
});

test("sockets are taken with the token only, from the bridge's own page or a process, never from another site's page", async (t) => {
  const started = await bridge(t);
  const withToken = bridgeSocketUrl(started.url, TOKEN);
  t.is(await refusal(started.url), 401, 'a local process without the token');
  t.is(await refusal(`${started.url}/?token=`), 401, 'an empty token');
  t.is(await refusal(bridgeSocketUrl(started.url, `${TOKEN}x`)), 401, 'a wrong token');
  t.is(await refusal(bridgeSocketUrl(started.url, TOKEN.slice(0, -1))), 401, 'a token cut short');
  t.is(await refusal(started.url, `http://localhost:${started.port}`), 401, 'its own page without the token');
  t.is(await refusal(withToken, 'https://evil.example'), 401, "another site's page, even with it");
  t.is(await refusal(withToken, `http://localhost:${started.port + 1}`), 401);
  const own = await socketTo(started, `http://localhost:${started.port}`);
  const process = await socketTo(started);
  t.teardown(() => {
    own.socket.close();
    process.socket.close();
  });
  process.socket.send(JSON.stringify({ type: '@xstate.event', sessionId: 'a', event: { type: 'X' } }));
  await eventually(async () => (own.got.length === 1 ? true : undefined), 'the page to get the event');
  t.deepEqual(own.got, [{ type: '@xstate.event', sessionId: 'a', event: { type: 'X' } }]);
});

/**
 * `sent` through a bridge keeping `keep` messages, then what a page opened after gets, once its
 * replay ends with `sent`'s last message.
 */
async function lateReplay(t: ExecutionContext, keep: number, sent: object[]): Promise<unknown[]> {
  const started = await bridge(t, keep);
  const weir = await socketTo(started);
  const watching = await socketTo(started, `http://127.0.0.1:${started.port}`);
  t.teardown(() => {
    weir.socket.close();
    watching.socket.close();
  });
  for (const message of sent) weir.socket.send(JSON.stringify(message));
  // A message is kept before it is relayed: once a page open all along has them, the bridge keeps them.
  await eventually(async () => (watching.got.length === sent.length ? true : undefined), 'the open page to get all');
  const late = await socketTo(started, `http://127.0.0.1:${started.port}`);
  t.teardown(() => late.socket.close());
  const last = JSON.stringify(sent.at(-1));
  await eventually(async () => (JSON.stringify(late.got.at(-1)) === last ? true : undefined), 'the replay');
  return late.got;
}

test('a page opened late gets the last messages kept, preceded by the actor each of them belongs to', async (t) => {
  const sent = [
    { type: '@xstate.actor', sessionId: 'a', name: 'first' },
    { type: '@xstate.event', sessionId: 'a', event: { type: 'A1' } },
    { type: '@xstate.event', sessionId: 'a', event: { type: 'A2' } },
    { type: '@xstate.actor', sessionId: 'b', name: 'second' },
    { type: '@xstate.event', sessionId: 'b', event: { type: 'B1' } },
  ];
  t.deepEqual(
    await lateReplay(t, 3, sent),
    [sent[0], sent[2], sent[3], sent[4]],
    "a's chart first: its event is still kept",
  );
});

test('an actor whose messages all left the kept ones is still sent before its next event to a page opened late (Weir announces a record once)', async (t) => {
  const sent = [
    { type: '@xstate.actor', sessionId: 'a', name: 'subscription' },
    { type: '@xstate.event', sessionId: 'a', event: { type: 'A1' } },
    { type: '@xstate.actor', sessionId: 'b', name: 'session' },
    { type: '@xstate.event', sessionId: 'b', event: { type: 'B1' } },
    { type: '@xstate.event', sessionId: 'b', event: { type: 'B2' } },
    // A month later: the subscription's next event, with no new actor message.
    { type: '@xstate.event', sessionId: 'a', event: { type: 'A2' } },
  ];
  t.deepEqual(
    await lateReplay(t, 3, sent),
    [sent[2], sent[0], sent[3], sent[4], sent[5]],
    "the charts first, a's among them for its A2",
  );
});

test('in Chromium, the bridge page relays what Weir sends into the embedded inspector, under its CSP', async (t) => {
  // A stand-in for the Stately inspector: says it is connected, then lists what it is sent.
  const inspector = createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end(`<!doctype html><title>inspector</title><script>
      window.received = [];
      window.addEventListener('message', (e) => window.received.push(e.data));
      window.parent.postMessage({ type: '@statelyai.connected' }, '*');
    </script>`);
  });
  inspector.listen(0, '127.0.0.1');
  await once(inspector, 'listening');
  t.teardown(() => inspector.close());
  const inspectorUrl = `http://127.0.0.1:${(inspector.address() as AddressInfo).port}/inspect`;
  const started = await bridge(t, undefined, inspectorUrl);

  const browser = await launchChromium(t);
  // Opened without the token, the page is refused and says what to open.
  const tokenless = await browser.newPage();
  await tokenless.goto(started.page);
  await tokenless.locator('#socket', { hasText: /^refused: open the address Weir printed/ }).waitFor();
  // With a token that is not the bridge's (a stale bookmark), it says so, not that Weir went away.
  const wrong = await browser.newPage();
  await wrong.goto(bridgePageUrl(started.page, `${TOKEN}x`));
  await wrong.locator('#socket', { hasText: /^refused: not the token Weir asks for/ }).waitFor();

  const page = await browser.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(e.message));
  // The page's timers (its reconnects) run when the test moves its clock on.
  await page.clock.install();
  // The token in the fragment, as Weir prints the address: the browser sends it to no server.
  await page.goto(bridgePageUrl(started.page, TOKEN));
  await page.locator('#socket', { hasText: /^connected$/ }).waitFor();

  const sink = createWebSocketInspector({ url: bridgeSocketUrl(started.url, TOKEN) });
  t.teardown(() => sink.stop());
  sink.actor('checkout_session-s1');
  sink.event('checkout_session-s1', { type: 'CheckoutSessionCreated' }, { source: 'api_key:k1' });

  const frame = await eventually(
    async () => page.frames().find((f) => f.url() === inspectorUrl),
    'the inspector frame',
  );
  const received = await eventually(async () => {
    const got = (await frame.evaluate('window.received')) as { type: string; sessionId: string }[];
    return got.length >= 2 ? got : undefined;
  }, 'the inspector to get the actor and its event');
  t.deepEqual(
    received.map((m) => `${m.type} ${m.sessionId}`),
    ['@xstate.actor checkout_session-s1', '@xstate.event checkout_session-s1'],
  );
  t.is(await page.locator('#count').textContent(), '2 messages');
  t.true(await page.locator('#states').isHidden(), 'the inspector answered: it shows the states');
  t.deepEqual(problems, [], 'no console error, CSP refusals among them');

  // Weir restarts (the same token, the same port): the page connects again by itself.
  sink.stop();
  await started.stop();
  await page.locator('#socket', { hasText: /^disconnected: connecting again/ }).waitFor();
  const restarted = await startInspectorBridge({ port: started.port, logger: quiet, token: TOKEN, inspectorUrl });
  t.teardown(() => restarted.stop());
  await page.clock.runFor(2000);
  await page.locator('#socket', { hasText: /^connected$/ }).waitFor();
  const again = createWebSocketInspector({ url: bridgeSocketUrl(restarted.url, TOKEN) });
  t.teardown(() => again.stop());
  again.actor('checkout_session-s2');
  await eventually(async () => {
    const got = (await frame.evaluate('window.received')) as { sessionId: string }[];
    return got.some((m) => m.sessionId === 'checkout_session-s2') ? true : undefined;
  }, 'the inspector to get what Weir sends after its restart');

  // Weir restarts asking another token (its file deleted): after a few refused
  // tries the page says it is refused, not that it is connecting again, and goes on trying slowly.
  again.stop();
  await restarted.stop();
  await page.locator('#socket', { hasText: /^disconnected: connecting again/ }).waitFor();
  const other = await startInspectorBridge({ port: started.port, logger: quiet, token: 'another', inspectorUrl });
  t.teardown(() => other.stop());
  const socket = page.locator('#socket');
  // The clock moved on a little at a time: each try is refused (its socket closes) before the next.
  const refused = await eventually(async () => {
    await page.clock.runFor(500);
    const shown = (await socket.textContent()) ?? '';
    return shown.startsWith('refused') ? shown : undefined;
  }, 'the page to say it is refused');
  t.is(
    refused,
    'refused: not the token Weir asks for (the one in its data dir’s inspector-token file), or Weir is not running; trying again every 10 s',
  );
  await other.stop();
  const back = await startInspectorBridge({ port: started.port, logger: quiet, token: TOKEN, inspectorUrl });
  t.teardown(() => back.stop());
  await page.clock.runFor(10_000);
  await socket.filter({ hasText: /^connected$/ }).waitFor();
});

test('in Chromium, where the inspector cannot be reached, the bridge page shows each record with its state and last event', async (t) => {
  // Nothing listens on port 9 (discard): the inspector never loads, as offline or where stately.ai is blocked.
  const started = await bridge(t, undefined, 'http://127.0.0.1:9/inspect');
  const browser = await launchChromium(t);
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(bridgePageUrl(started.page, TOKEN));
  await page.locator('#socket', { hasText: /^connected$/ }).waitFor();

  t.is(await page.locator('#count').textContent(), 'no messages');
  t.is(await page.title(), 'Weir: statecharts, live');

  // As `openInspector` makes it: each actor named by its record, nested under what it was made for.
  const naming = namingActors();
  const inspector = createWebSocketInspector({ url: bridgeSocketUrl(started.url, TOKEN), serialize: naming.serialize });
  t.teardown(() => inspector.stop());
  const sink = naming.sink(inspector);
  const machine = {
    id: 'checkout_session-s1',
    sessionId: 'checkout_session-s1',
    name: 'cs_1 (org_1/test) for invoice inv_1',
    logic: { config: { id: 'checkoutSession' } },
    _parent: { sessionId: 'invoice-inv_1' },
  };
  const actor = machine as unknown as Parameters<typeof sink.actor>[0];
  sink.actor(actor, { status: 'active', value: 'new', context: {} });
  await page.locator('#count', { hasText: /^1 message$/ }).waitFor();
  sink.event(actor, { type: 'CheckoutSessionCreated' });
  sink.snapshot(actor, { status: 'active', value: { open: 'awaitingPayment' }, context: {} });
  sink.actor('invoice-i1', { status: 'active', value: 'draft', context: {} });
  // What a record's id or an event's type holds is shown as text, never run as HTML.
  const hostile = {
    ...machine,
    id: 'checkout_session-x',
    sessionId: 'checkout_session-x',
    name: '<img src=x onerror="window.ran=1"> (org_1/test)',
  } as unknown as Parameters<typeof sink.actor>[0];
  sink.actor(hostile, { status: 'active', value: 'new', context: {} });
  sink.event(hostile, { type: '<img src=y onerror="window.ran=2">' });

  const rows = page.locator('#states tbody tr');
  await rows.first().locator('td', { hasText: 'onerror="window.ran=2"' }).waitFor();
  t.deepEqual(await rows.allInnerTexts(), [
    '<img src=x onerror="window.ran=1"> (org_1/test)\tcheckoutSession\tnew\t<img src=y onerror="window.ran=2">',
    'invoice-i1\t\tdraft\t',
    'cs_1 (org_1/test) for invoice inv_1\tcheckoutSession\topen.awaitingPayment\tCheckoutSessionCreated',
  ]);
  t.is(await page.locator('#states img').count(), 0);
  t.is(await page.evaluate('window.ran'), undefined);
  t.true(await page.locator('#states').isVisible());

  // Held for an inspector that never answers: the last 2,000 messages, and each shown record's chart.
  for (let i = 0; i < 2100; i += 1) sink.event(actor, { type: `Step${i}` });
  await rows.nth(2).locator('td', { hasText: 'Step2099' }).waitFor();
  const held = (await page.evaluate('waiting.map((m) => m.event?.type ?? m.type)')) as string[];
  t.is(held.length, 2000);
  t.deepEqual(held.slice(0, 4), ['@xstate.actor', '@xstate.actor', '@xstate.actor', 'Step103']);
  t.is(held.at(-1), 'Step2099');

  // A record announced again (Weir restarted): its new chart takes the place of its last, ahead of its events.
  sink.actor('invoice-i1', { status: 'active', value: 'paid', context: {} });
  await rows
    .nth(1)
    .locator('td', { hasText: /^paid$/ })
    .waitFor();
  const invoice = "waiting.flatMap((m, i) => (m.sessionId === 'invoice-i1' ? [i + ' ' + m.snapshot.value] : []))";
  t.deepEqual(await page.evaluate(invoice), ['1 paid']);

  // A page left open for days: past a thousand records, the oldest rows go, and their charts with them.
  for (let i = 0; i < 2500; i += 1) sink.actor(`invoice-f${i}`, { status: 'active', value: 'draft', context: {} });
  await rows
    .first()
    .locator('td', { hasText: /^invoice-f2499$/ })
    .waitFor();
  t.is(await rows.count(), 1000);
  const charts = (await page.evaluate(
    "waiting.filter((m) => m.type === '@xstate.actor').map((m) => m.sessionId)",
  )) as string[];
  t.deepEqual(
    charts,
    Array.from({ length: 1000 }, (_, i) => `invoice-f${1500 + i}`),
    'the charts of the records shown',
  );
  t.true(((await page.evaluate('waiting.length')) as number) <= 2000);
});

test("watched settles once a page has opened its socket, not when Weir's own (a process's) opens", async (t) => {
  const started = await bridge(t);
  let watched = false;
  void started.watched.then(() => {
    watched = true;
  });
  const weir = await socketTo(started);
  t.teardown(() => weir.socket.close());
  // Its ping answered, the bridge has handled that socket's connection.
  weir.socket.ping();
  await once(weir.socket, 'pong');
  await new Promise(setImmediate);
  t.false(watched, "Weir's own socket is no page");
  const page = await socketTo(started, `http://localhost:${started.port}`);
  t.teardown(() => page.socket.close());
  await started.watched;
  t.true(watched);
});

test('a port already taken is a clear error, not a crash', async (t) => {
  const first = await bridge(t);
  await t.throwsAsync(startInspectorBridge({ port: first.port, logger: quiet, token: TOKEN }), {
    message: `the inspector's port ${first.port} is in use: choose another with --inspect PORT`,
  });
});

test('an error of the listening server (EMFILE on accept) is logged, and the bridge serves on', async (t) => {
  const lines: string[] = [];
  const started = await bridge(
    t,
    undefined,
    undefined,
    createLineLogger((line) => lines.push(line)),
  );
  // The bridge's own server, as the request it answers names it.
  let server: Server | undefined;
  const seen = (message: unknown) => {
    server = (message as { server: Server }).server;
  };
  subscribe('http.server.request.start', seen);
  t.teardown(() => unsubscribe('http.server.request.start', seen));
  t.is((await get(started.port, `localhost:${started.port}`)).status, 200);

  const emfile = () => Object.assign(new Error('accept EMFILE'), { code: 'EMFILE', syscall: 'accept' });
  // Unheard (by the bridge or its socket server), an error is thrown here: in Weir, an uncaught exception.
  t.notThrows(() => server!.emit('error', emfile()));
  t.notThrows(() => server!.emit('error', emfile()));
  t.is(lines.length, 2, 'each error logged once');
  t.like(JSON.parse(lines[0]!), { level: 50, event: 'inspector.error', err: { code: 'EMFILE' } });
  t.is((await get(started.port, `localhost:${started.port}`)).status, 200);
  const { socket } = await socketTo(started);
  socket.close();
});

test('a stop ends every connection, one caught half way through its upgrade (a page reconnecting) too', async (t) => {
  const started = await startInspectorBridge({ port: 0, logger: quiet, token: TOKEN });
  const half = connect(started.port, '127.0.0.1');
  await once(half, 'connect');
  // The request line and some headers of an upgrade, never finished: neither ws's nor an idle one.
  half.write(`GET /?token=x HTTP/1.1\r\nHost: 127.0.0.1:${started.port}\r\nUpgrade: websocket\r\n`);
  // Its end may come as a reset: an error, then the close awaited.
  half.on('error', () => {});
  const closed = new Promise((resolve) => half.once('close', resolve));
  await started.stop();
  await closed;
  t.pass();
});
