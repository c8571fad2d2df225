import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import WebSocket, { WebSocketServer } from 'ws';
import { checkoutSessionAggregate } from '../../machines/checkout-session.aggregate.ts';
import type { CheckoutSessionEvent } from '../../machines/checkout-session.types.ts';
import { createCustomer, payInFull, type Session } from '../api/helpers.ts';
import { eventually } from '../support/api-client.ts';
import { findFreePort } from '../support/free-port.ts';
import { INSPECTOR_TOKEN_FILE } from '../../src/inspect/inspector.ts';
import { bridgeSocketUrl } from '../../src/inspect/inspector-bridge.ts';
import { createLineLogger } from '../../src/shared/logger.ts';
import { ADMIN_TOKEN, createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';

type Inspection = {
  type: '@xstate.actor' | '@xstate.event' | '@xstate.snapshot';
  sessionId: string;
  sourceId?: string;
  name?: string;
  parentId?: string;
  definition?: string;
  event?: { type: string };
  snapshot?: { value?: unknown; status?: string };
};

/** An inspector server of its own for a test, every message it is sent, and the path each socket asked for. */
async function inspectorServer(t: ExecutionContext) {
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  t.teardown(() => server.close());
  await once(server, 'listening');
  const received: Inspection[] = [];
  const paths: (string | undefined)[] = [];
  server.on('connection', (socket, req) => {
    paths.push(req.url);
    socket.on('message', (data) => received.push(JSON.parse(String(data)) as Inspection));
  });
  return { url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`, received, paths };
}

test('weir serve --inspect: one real checkout shows in the inspector as its machine: the actor with its chart, then each event of its stream and the snapshot after it, in log order', async (t) => {
  const { url, received, paths } = await inspectorServer(t);
  const weir = await startTestWeir(t, { inspect: url });
  const merchant = await createMerchant(weir.url);
  const created = await merchant.api.post<Session>('/api/v1/checkout/sessions', sessionRequest());
  t.is(created.status, 200);
  await payInFull(weir, merchant.api, created.body);

  const actorId = `checkout_session-${created.body.id}`;
  const ofSession = await eventually(async () => {
    const mine = received.filter((m) => m.sessionId === actorId);
    return mine.at(-1)?.snapshot?.value === 'complete' ? mine : undefined;
  }, 'the inspector to see the session complete');

  t.deepEqual(paths, ['/'], 'an inspector server of its own is sent no token, the admin token least of all');
  const [actor, ...steps] = ofSession;
  t.is(actor?.type, '@xstate.actor');
  t.is(
    actor?.name,
    `${created.body.id} (${merchant.organizationId}/test)`,
    'named by its record, one of many sessions',
  );
  t.regex(actor?.definition ?? '', /"id":"checkoutSession"/);
  const log = await weir.eventStore.readStream(actorId);
  t.deepEqual(
    steps.map((m) => `${m.type} ${m.event?.type}`),
    log.flatMap((e) => [`@xstate.event ${e.type}`, `@xstate.snapshot ${e.type}`]),
    'an event and the snapshot after it, for each event in the log, in order',
  );
  t.is(steps[0]?.sourceId, log[0]?.metadata.actor as string, 'the event comes from the API key that created it');
  let state = checkoutSessionAggregate.initialState();
  const values = log.map((e) => {
    state = checkoutSessionAggregate.evolve(state, e as unknown as CheckoutSessionEvent);
    return state.value;
  });
  t.deepEqual(
    steps.filter((m) => m.type === '@xstate.snapshot').map((m) => m.snapshot?.value),
    values,
    "each snapshot is the machine's state after that event",
  );
});

test("weir serve --inspect: the checkout session an invoice's pay page opens is shown as the invoice's child, named for it", async (t) => {
  const inspector = await inspectorServer(t);
  const weir = await startTestWeir(t, { inspect: inspector.url });
  const { api, organizationId } = await createMerchant(weir.url);
  const customerId = await createCustomer(api);
  const lineItems = {
    data: [{ priceData: { currency: 'usdc', unitAmount: '1000000', productData: { name: 'Hour' } }, quantity: 1 }],
  };
  const invoice = (await api.post<{ id: string }>('/api/v1/invoices', { customerId, lineItems })).body;
  t.is((await api.post(`/api/v1/invoices/${invoice.id}/finalize`)).status, 200);
  const pay = await fetch(`${weir.url}/invoices/${invoice.id}/pay`, { redirect: 'manual' });
  t.is(pay.status, 302);
  const sessionId = pay.headers.get('location')?.split('/').pop();

  const actors = await eventually(async () => {
    const announced = inspector.received.filter((m) => m.type === '@xstate.actor');
    return announced.some((m) => m.sessionId === `checkout_session-${sessionId}`) ? announced : undefined;
  }, "the inspector to see the invoice's session");
  t.like(
    actors.find((m) => m.sessionId === `invoice-${invoice.id}`),
    {
      name: `${invoice.id} (${organizationId}/test)`,
      parentId: undefined,
    },
  );
  t.like(
    actors.find((m) => m.sessionId === `checkout_session-${sessionId}`),
    {
      name: `${sessionId} (${organizationId}/test) for invoice ${invoice.id}`,
      parentId: `invoice-${invoice.id}`,
    },
  );
});

test("weir serve --inspect PORT with an admin token: the bridge page's socket, on loopback and with the data dir's token (never the admin token), gets a new session's actor and events", async (t) => {
  const port = await findFreePort();
  const weir = await startTestWeir(t, { inspect: String(port) });
  const token = weir.inspectorPage?.credential.token ?? '';
  t.not(token, ADMIN_TOKEN);
  t.like(weir.inspectorPage, {
    page: `http://localhost:${port}`,
    credential: { file: join(weir.dataDir, INSPECTOR_TOKEN_FILE) },
  });
  const refused = new WebSocket(bridgeSocketUrl(`ws://127.0.0.1:${port}`, ADMIN_TOKEN), {
    origin: `http://localhost:${port}`,
  });
  await t.throwsAsync(once(refused, 'open'), undefined, 'the admin token opens no socket');
  const page = new WebSocket(bridgeSocketUrl(`ws://127.0.0.1:${port}`, token), {
    origin: `http://localhost:${port}`,
  });
  t.teardown(() => page.close());
  const received: Inspection[] = [];
  page.on('message', (data) => received.push(JSON.parse(String(data)) as Inspection));
  await once(page, 'open');

  const merchant = await createMerchant(weir.url);
  const created = await merchant.api.post<Session>('/api/v1/checkout/sessions', sessionRequest());
  t.is(created.status, 200);
  const actorId = `checkout_session-${created.body.id}`;
  const seen = await eventually(async () => {
    const mine = received.filter((m) => m.sessionId === actorId);
    return mine.some((m) => m.type === '@xstate.snapshot') ? mine : undefined;
  }, 'the page to see the session');
  t.deepEqual(
    seen.map((m) => `${m.type} ${m.event?.type ?? m.name}`),
    [
      `@xstate.actor ${created.body.id} (${merchant.organizationId}/test)`,
      '@xstate.event CheckoutSessionCreated',
      '@xstate.snapshot CheckoutSessionCreated',
    ],
  );
});

test('weir serve --inspect PORT without an admin token: its socket takes the token in the data dir (the log names the file, never the token), the same after a restart', async (t) => {
  const port = await findFreePort();
  const dataDir = await mkdtemp(join(tmpdir(), 'weir-inspector-token-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const lines: string[] = [];
  const logger = createLineLogger((line) => lines.push(line));
  const first = await startTestWeir(t, { dataDir, inspect: String(port), adminToken: undefined }, { logger });
  const file = join(dataDir, INSPECTOR_TOKEN_FILE);
  const token = (await readFile(file, 'utf8')).trim();
  t.like(first.inspectorPage, { credential: { token, file } });
  const inspecting = lines
    .map((l) => JSON.parse(l) as { event?: string; msg: string })
    .find((l) => l.event === 'weir.inspecting');
  t.is(
    inspecting?.msg,
    `statecharts shown live: open http://localhost:${port}/#token=<the token in ${file}> (the Stately inspector)`,
  );
  t.false(
    lines.some((l) => l.includes(token)),
    'no log line holds the token',
  );
  await first.stop();

  const again = await startTestWeir(t, { dataDir, inspect: String(port), adminToken: undefined });
  t.is(again.inspectorPage?.credential.token, token, 'a page bookmarked before the restart connects');
  const page = new WebSocket(bridgeSocketUrl(`ws://127.0.0.1:${port}`, token), { origin: `http://localhost:${port}` });
  t.teardown(() => page.close());
  await once(page, 'open');
});

const listening = async (port: number): Promise<Server> => {
  const server = createServer();
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  return server;
};

test('a start that fails after the bridge is up (the HTTP port taken) closes the bridge and lets go of the data dir before the error comes out', async (t) => {
  const taken = await listening(0);
  t.teardown(() => taken.close());
  const bridgePort = await findFreePort();
  const dataDir = await mkdtemp(join(tmpdir(), 'weir-failed-start-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));

  await t.throwsAsync(
    startTestWeir(t, { dataDir, port: (taken.address() as AddressInfo).port, inspect: String(bridgePort) }),
    { code: 'EADDRINUSE' },
  );
  // Listening there now fails with EADDRINUSE if the bridge (or its process) still holds it.
  (await listening(bridgePort)).close();
  // The data dir's lock, and so the log and read models in it, were let go too: the next start takes them.
  const weir = await startTestWeir(t, { dataDir, inspect: String(bridgePort) });
  t.is((await fetch(`${weir.url}/health`)).status, 200);
});
