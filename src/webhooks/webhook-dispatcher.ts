import { type WebhookDeliveryCommand, webhookDeliveryAggregate } from '../../machines/webhook-delivery.aggregate.ts';
import type { CommandHandler } from '../actors/command-handler.ts';
import { previousSecretExpiry } from '../actors/webhook-endpoint.ts';
import type { Environment, EventStore } from '../event-store/event-store.ts';
import { COLLECTIONS, type WebhookDeliveryDoc, type WebhookEndpointDoc } from '../projections/collections.ts';
import type { ProjectionRunner } from '../projections/projection-runner.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import { createProcessor } from '../processing/processor.ts';
import { doublingDelay } from '../shared/backoff.ts';
import type { Clock } from '../shared/clock.ts';
import type { SecretBox } from '../tenancy/secrets.ts';
import { createFairQueue, type FairQueueLimits } from './fair-queue.ts';
import { TEST_WEBHOOK_EVENT_TYPE } from './webhook-event-types.ts';
import { createWebhookBodies } from './webhook-bodies.ts';
import { type RecordPresenters, renderWebhookBody } from './webhook-events.ts';
import { scrubUrls, type Log } from '../shared/logger.ts';
import { noMetrics, type Metrics } from '../shared/metrics.ts';
import { DeliveryAbortedError, type WebhookSender } from './webhook-sender.ts';

/** A delivery whose outcome could not be recorded is tried again after 1 s, doubling up to a minute. */
const RECORD_RETRY_FIRST_MS = 1_000;
const RECORD_RETRY_MAX_MS = 60_000;

/**
 * In flight at once: 512 in all, 64 per tenant, 16 per endpoint. A tenant whose endpoints hang for
 * the whole 10 s timeout holds at most 64 slots, and one endpoint at most 16 of them.
 */
const STOP_GRACE_MS = 5_000;

export const DEFAULT_DELIVERY_LIMITS: FairQueueLimits = { total: 512, perTenant: 64, perEndpoint: 16 };

export type WebhookDispatcher = {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Deliveries waiting and being sent now, and outcomes recorded that the read model does not show yet. */
  status(): { queued: number; inFlight: number; awaitingReadModel: number };
};

type Queued = { id: string; tenant: string; endpoint: string; dueAt: number; delivery: WebhookDeliveryDoc };
type Endpoint = { doc: WebhookEndpointDoc; secret: string; previousSecret: string | null } | null;

/**
 * Sends due webhook deliveries and records each attempt's outcome in the delivery's stream.
 *
 * What is pending comes from the deliveries read model: read whole once at start, then followed
 * document by document as the projections write them (`onDocumentsChanged`), into an in-memory
 * queue that shares the sending slots fairly between tenants and their endpoints. A delivery whose
 * endpoint was deleted (or disabled, except a test event) is canceled, recorded as such.
 */
export function createWebhookDispatcher(deps: {
  clock: Clock;
  eventStore: EventStore;
  readStore: ReadStore;
  projections: Pick<ProjectionRunner, 'onDocumentsChanged'>;
  commands: CommandHandler;
  secretBox: SecretBox;
  send: WebhookSender;
  /** Bodies carry sessions and payment intents as the API shows them. */
  present: RecordPresenters;
  limits?: FairQueueLimits;
  /** How long a stop lets requests in flight finish and be recorded before aborting them (default 5 s). */
  stopGraceMs?: number;
  log?: Log;
  metrics?: Metrics;
}): WebhookDispatcher {
  const { clock, eventStore, readStore, projections, commands, secretBox, send } = deps;
  const log: Log = deps.log ?? ((line: string) => console.error(line));
  const deliveries = readStore.collection<WebhookDeliveryDoc>(COLLECTIONS.webhookDeliveries);
  const endpointDocs = readStore.collection<WebhookEndpointDoc>(COLLECTIONS.webhookEndpoints);
  const queue = createFairQueue<Queued>(deps.limits ?? DEFAULT_DELIVERY_LIMITS);
  const inFlight = new Map<string, Promise<void>>();
  /** Aborts every request in flight when the dispatcher stops (the sender listens once per signal). */
  const stopping = new AbortController();
  /** Attempts this dispatcher recorded that the read model may not show yet: an older document is stale. */
  const recorded = new Map<string, number>();
  /** Failures in a row to record a delivery's outcome (store trouble), for its backoff. */
  const recordFailures = new Map<string, number>();
  const endpoints = new Map<string, Endpoint>();
  const bodies = createWebhookBodies();
  const unsubscribes: (() => void)[] = [];
  let stopped = false;
  /**
   * Rejects as the dispatcher starts stopping: a body still rendering (its presenters may wait for a
   * server that never listens) has not gone out, so it is given up and sent by the next owner.
   */
  let halt: () => void = () => {};
  const halted = new Promise<never>((_, reject) => {
    halt = () => reject(new DeliveryAbortedError('the dispatcher stopped before the body was rendered'));
  });
  halted.catch(() => {});
  /** Document updates are applied one batch at a time, in the order the projections wrote them. */
  let updates: Promise<void> = Promise.resolve();
  const metrics = deps.metrics ?? noMetrics;
  const attemptsRecorded = metrics.counter({
    name: 'weir_webhook_attempts_total',
    help: 'Webhook delivery attempts recorded, by outcome: succeeded, retrying, failed (no retry left), canceled (endpoint deleted or disabled)',
    labelNames: ['outcome'],
  });
  metrics.gauge(
    {
      name: 'weir_webhook_queue_depth',
      help: 'Webhook deliveries in the dispatcher: queued (due now or waiting for their retry time) and in flight',
      labelNames: ['state'],
    },
    () => {
      const size = queue.size();
      return [
        { labels: { state: 'queued' }, value: size.queued },
        { labels: { state: 'in_flight' }, value: size.inFlight },
      ];
    },
  );

  const tenantOf = (d: WebhookDeliveryDoc) => `${d.environment}:${d.organizationId}`;

  /** Attempts the read model showed for deliveries while they were in flight (their outcome decides then). */
  const shownInFlight = new Map<string, number>();

  /** What the read model says of a delivery, unless this dispatcher knows better. */
  function follow(doc: WebhookDeliveryDoc | null, id: string): void {
    if (queue.isInFlight(id)) {
      if (doc) shownInFlight.set(id, doc.attempts);
      return;
    }
    const known = recorded.get(id);
    if (doc && known !== undefined && doc.attempts < known) return;
    recorded.delete(id);
    if (!doc || doc.status !== 'pending' || doc.nextAttemptAt === null) {
      queue.remove(id);
      return;
    }
    queue.add({ id, tenant: tenantOf(doc), endpoint: doc.endpointId, dueAt: doc.nextAttemptAt, delivery: doc });
  }

  async function endpointOf(id: string): Promise<Endpoint> {
    if (endpoints.has(id)) return endpoints.get(id)!;
    const doc = await endpointDocs.get(id);
    const endpoint = doc
      ? {
          doc,
          secret: secretBox.open(doc.sealedSecret),
          previousSecret: doc.previousSealedSecret ? secretBox.open(doc.previousSealedSecret) : null,
        }
      : null;
    endpoints.set(id, endpoint);
    return endpoint;
  }

  /**
   * Whether a delivery is to end as soon as it is looked at, as far as the endpoints seen so far say:
   * its endpoint is deleted, or disabled and it is no test (a test goes even to a disabled endpoint).
   */
  function endsNow(delivery: WebhookDeliveryDoc): boolean {
    const endpoint = endpoints.get(delivery.endpointId);
    if (endpoint === undefined) return false;
    if (endpoint === null || endpoint.doc.deleted) return true;
    return endpoint.doc.isDisabled && delivery.eventType !== TEST_WEBHOOK_EVENT_TYPE;
  }

  /** An endpoint changed: forget what was cached; the deliveries it can no longer take end now. */
  async function endpointChanged(id: string): Promise<void> {
    endpoints.delete(id);
    await endpointOf(id);
    queue.dueNow(id, clock.now(), (item) => endsNow(item.delivery));
  }

  /**
   * Rendered from the log once per public event, name and environment: all its endpoints that take
   * that name get the same bytes (an audit checkpoint's test and live endpoints differ in `livemode`).
   */
  const bodyOf = (delivery: WebhookDeliveryDoc): Promise<string> =>
    bodies.bodyOf(`${delivery.eventId} ${delivery.eventType} ${delivery.environment}`, () =>
      renderWebhookBody(
        eventStore,
        delivery.source,
        {
          id: delivery.eventId,
          type: delivery.eventType,
          object: delivery.eventObject,
          created: delivery.firstDueAt,
          livemode: delivery.environment === 'live',
        },
        deps.present,
      ),
    );

  /** What to record for a delivery: its endpoint is gone, or the outcome of sending it now. */
  async function attemptOf(delivery: WebhookDeliveryDoc, signal: AbortSignal): Promise<WebhookDeliveryCommand> {
    const endpoint = await endpointOf(delivery.endpointId);
    if (!endpoint || endpoint.doc.deleted) return { type: 'CancelDelivery', reason: 'endpoint_deleted' };
    // A test goes to its endpoint even while it is disabled (that is how it was asked for).
    if (endpoint.doc.isDisabled && delivery.eventType !== TEST_WEBHOOK_EVENT_TYPE)
      return { type: 'CancelDelivery', reason: 'endpoint_disabled' };
    const nowMs = clock.now();
    const outcome = await send({
      url: endpoint.doc.url,
      body: await Promise.race([bodyOf(delivery), halted]),
      secret: endpoint.secret,
      // The old secret signs too until its overlap ends, as the clock says at send time (no timer).
      previousSecret: previousSecretExpiry(endpoint.doc, nowMs) ? endpoint.previousSecret : null,
      eventId: delivery.eventId,
      nowMs,
      environment: delivery.environment as Environment,
      signal,
    });
    return {
      type: 'RecordDeliveryAttempt',
      attempt: delivery.attempts + 1,
      firstDueAt: delivery.firstDueAt,
      ...outcome,
    };
  }

  async function run(item: Queued, signal: AbortSignal): Promise<void> {
    const { delivery } = item;
    try {
      const command = await attemptOf(delivery, signal);
      const { state } = await commands.handle(webhookDeliveryAggregate, delivery.id, command, {
        organizationId: delivery.organizationId,
        environment: delivery.environment as Environment,
        actor: 'system:webhook-dispatcher',
        causationId: delivery.eventId,
        // A delivery's stream starts with its first attempt's outcome.
        assumeNew: delivery.attempts === 0,
      });
      recordFailures.delete(delivery.id);
      if (command.type === 'CancelDelivery') attemptsRecorded.inc({ outcome: 'canceled' });
      if (command.type === 'RecordDeliveryAttempt') {
        const ok = command.error === null && command.statusCode !== null;
        const outcome = ok ? 'succeeded' : state.value === 'failed' ? 'failed' : 'retrying';
        attemptsRecorded.inc({ outcome });
        // The endpoint's id, never its URL (a URL may hold a token) nor its secret.
        log(`[webhooks] ${delivery.eventType} to ${delivery.endpointId}: ${command.statusCode ?? 'no answer'}`, {
          level: ok ? 'info' : 'warn',
          event: 'webhook.attempt',
          organizationId: delivery.organizationId,
          environment: delivery.environment,
          endpointId: delivery.endpointId,
          deliveryId: delivery.id,
          eventId: delivery.eventId,
          eventType: delivery.eventType,
          attempt: command.attempt,
          statusCode: command.statusCode,
          durationMs: command.durationMs,
          outcome,
          ...(command.error && !ok ? { error: scrubUrls(command.error) } : {}),
        });
      }
      // The log's word on the delivery now (another writer may have recorded this attempt first).
      const { attempts, nextAttemptAt } = state.context;
      // Remembered until the read model shows it, unless it already did while the attempt was in flight.
      if ((shownInFlight.get(delivery.id) ?? -1) < attempts) recorded.set(delivery.id, attempts);
      shownInFlight.delete(delivery.id);
      queue.finish(item.id);
      if (state.value === 'pending' && nextAttemptAt !== null) {
        // Its endpoint went away during the attempt: it ends now rather than at its next retry.
        const dueAt = endsNow(delivery) ? clock.now() : Date.parse(nextAttemptAt);
        queue.add({ ...item, dueAt, delivery: { ...delivery, attempts, nextAttemptAt: dueAt } });
      }
    } catch (error) {
      shownInFlight.delete(delivery.id);
      queue.finish(item.id);
      if (error instanceof DeliveryAbortedError || stopped) return;
      // The receiver may have it already; it is sent again after a pause (receivers dedupe by event id).
      const failures = (recordFailures.get(delivery.id) ?? 0) + 1;
      recordFailures.set(delivery.id, failures);
      const waitMs = doublingDelay(failures, RECORD_RETRY_FIRST_MS, RECORD_RETRY_MAX_MS);
      log(
        `[webhooks] delivery ${delivery.id} could not be recorded (${(error as Error).message}); again in ${waitMs} ms`,
      );
      queue.add({ ...item, dueAt: clock.now() + waitMs });
    }
  }

  /**
   * Each pass starts whatever may start now (the sends run on their own, each poking when done) and
   * wakes up when the next delivery falls due. Taking from the queue cannot fail: a delivery's own
   * failures back off in `run`, so the processor's retry policy is only a backstop.
   */
  const processor = createProcessor({
    name: 'webhooks',
    clock,
    log,
    metrics,
    retry: { firstMs: RECORD_RETRY_FIRST_MS, maxMs: RECORD_RETRY_MAX_MS },
    work: {
      async pass(now) {
        for (const item of queue.take(now)) {
          const done = run(item, stopping.signal).finally(() => {
            inFlight.delete(item.id);
            pump();
          });
          inFlight.set(item.id, done);
        }
        return { nextAt: queue.nextDueAt() };
      },
    },
  });

  /** Start whatever may start now, and wake up when the next delivery falls due. */
  function pump(): void {
    if (!stopped) void processor.poke();
  }

  /** Applies a batch of changed documents in order after the ones before it. */
  function enqueueUpdate(apply: () => Promise<void>): void {
    updates = updates
      .then(apply)
      .catch((error: unknown) => log(`[webhooks] could not follow the read model: ${(error as Error).stack ?? error}`))
      .then(() => pump());
  }

  return {
    async start() {
      unsubscribes.push(
        projections.onDocumentsChanged(COLLECTIONS.webhookDeliveries, (ids) =>
          enqueueUpdate(async () => {
            for (const id of ids) follow(await deliveries.get(id), id);
          }),
        ),
        projections.onDocumentsChanged(COLLECTIONS.webhookEndpoints, (ids) =>
          enqueueUpdate(async () => {
            for (const id of ids) await endpointChanged(id);
          }),
        ),
      );
      // Watching before reading: a delivery written in between is seen twice, never missed.
      const pending = await deliveries.find({ status: 'pending' });
      for (const doc of pending) follow(doc, doc.id);
      await processor.start();
    },
    async stop() {
      stopped = true;
      halt();
      for (const unsubscribe of unsubscribes) unsubscribe();
      await processor.stop();
      await updates;
      // A request the receiver already has, aborted unrecorded, would go out again from the next owner.
      const settled = Promise.allSettled([...inFlight.values()]);
      let cancelGrace: () => void = () => {};
      const grace = new Promise<void>((resolve) => {
        cancelGrace = clock.schedule(clock.now() + (deps.stopGraceMs ?? STOP_GRACE_MS), resolve);
      });
      await Promise.race([settled, grace]);
      cancelGrace();
      stopping.abort();
      await settled;
    },
    status: () => ({ ...queue.size(), awaitingReadModel: recorded.size }),
  };
}
