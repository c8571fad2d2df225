import { randomBytes, randomUUID } from 'node:crypto';
import test from 'ava';
import { sessionFixture } from '../../machines/checkout-session.fixture.ts';
import { createCommandHandler } from '../actors/command-handler.ts';
import type { EventMetadata } from '../event-store/event-store.ts';
import type { JsonObject } from '../shared/json.ts';
import { createSqliteEventStore } from '../event-store/sqlite-event-store.ts';
import { COLLECTIONS, type WebhookDeliveryDoc, type WebhookEndpointDoc } from '../projections/collections.ts';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
import { createManualClock } from '../shared/clock.ts';
import { createSecretBox } from '../tenancy/secrets.ts';
import { createWebhookDispatcher } from './webhook-dispatcher.ts';
import { type PresentersAt, presentersOnceKnown } from './webhook-events.ts';
import type { WebhookRequest } from './webhook-sender.ts';

const AT = '2026-01-01T00:00:00.000Z';
const SESSION = sessionFixture();
const METADATA: EventMetadata = {
  organizationId: 'org-1',
  environment: 'test',
  actor: 'test',
  correlationId: 'c',
  occurredAt: AT,
};

/** A dispatcher with one delivery due now (a session's event to one endpoint), and what it sends. */
async function dispatcherWithDueDelivery(present: ReturnType<typeof presentersOnceKnown>['present']) {
  const clock = createManualClock(Date.parse(AT));
  const eventStore = createSqliteEventStore({ path: ':memory:' });
  await eventStore.append(
    `checkout_session-${SESSION.id}`,
    [
      {
        id: randomUUID(),
        type: 'CheckoutSessionCreated',
        data: { session: SESSION } as unknown as JsonObject,
        metadata: METADATA,
      },
    ],
    'no_stream',
  );
  const readStore = createEmbeddedReadStore();
  const secretBox = createSecretBox(randomBytes(32));
  await readStore.collection<WebhookEndpointDoc>(COLLECTIONS.webhookEndpoints).put({
    _id: 'we-1',
    id: 'we-1',
    organizationId: 'org-1',
    environment: 'test',
    description: 'shop',
    url: 'https://shop.example/hooks',
    sealedSecret: secretBox.seal('whsec_test'),
    isDisabled: false,
    enabledEvents: { events: ['*'] },
    createdAt: AT,
    updatedAt: AT,
    deleted: false,
  });
  await readStore.collection<WebhookDeliveryDoc>(COLLECTIONS.webhookDeliveries).put({
    _id: 'd-1',
    id: 'd-1',
    organizationId: 'org-1',
    environment: 'test',
    endpointId: 'we-1',
    eventId: 'evt-1',
    eventType: 'checkout_session.canceled',
    eventObject: 'checkoutSession',
    source: { streamId: `checkout_session-${SESSION.id}`, revision: 0 },
    createdAt: AT,
    firstDueAt: clock.now(),
    status: 'pending',
    attempts: 0,
    nextAttemptAt: clock.now(),
    log: [],
  });
  const sent: WebhookRequest[] = [];
  const dispatcher = createWebhookDispatcher({
    clock,
    eventStore,
    readStore,
    projections: { onDocumentsChanged: () => () => {} },
    commands: createCommandHandler({ eventStore, clock }),
    secretBox,
    send: async (request) => {
      sent.push(request);
      return { statusCode: 200, error: null, durationMs: 1, response: '' };
    },
    present,
    log: () => {},
  });
  return { dispatcher, sent, close: () => eventStore.close() };
}

const presenters: PresentersAt = (publicUrl) => ({
  checkoutSession: (session) => ({ id: session.id, publicUrl, paymentIntent: { transactions: [] } }),
  paymentIntent: (session) => ({ id: session.id, publicUrl }),
});

test('a stop while a body waits for presenters the server never gives (it never listened) ends, sending nothing', async (t) => {
  let rendering = () => {};
  const waiting = new Promise<void>((resolve) => {
    rendering = resolve;
  });
  const later = presentersOnceKnown(presenters, null);
  const { dispatcher, sent, close } = await dispatcherWithDueDelivery({
    ...later.present,
    checkoutSession: (session) => {
      rendering();
      return later.present.checkoutSession(session);
    },
  });
  t.teardown(close);
  await dispatcher.start();
  await waiting;
  t.is(dispatcher.status().inFlight, 1, 'the delivery holds its slot while its body waits');
  // Before the fix this never settled: the render waited for `listening`, and stop for the render.
  await dispatcher.stop();
  t.deepEqual(sent, []);
});

test('presenters of a public URL known before listening render at once; otherwise once listening', async (t) => {
  const known = presentersOnceKnown(presenters, 'https://pay.example');
  t.like(await known.present.checkoutSession(SESSION), { publicUrl: 'https://pay.example' });

  const later = presentersOnceKnown(presenters, null);
  const rendered = later.present.paymentIntent(SESSION);
  later.listening('http://127.0.0.1:4321');
  t.like(await rendered, { id: SESSION.id, publicUrl: 'http://127.0.0.1:4321' });
});
