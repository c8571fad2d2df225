import { webhookDeliveryAggregate } from '../../machines/webhook-delivery.aggregate.ts';
import type { CommandHandler } from '../actors/command-handler.ts';
import type { Environment, EventStore } from '../event-store/event-store.ts';
import { renderWebhookBody } from './webhook-events.ts';
import type { ProjectionRunner } from '../projections/projection-runner.ts';
import { COLLECTIONS, type WebhookDeliveryDoc, type WebhookEndpointDoc } from '../projections/collections.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import type { Clock } from '../shared/clock.ts';
import { createDueWorkLoop } from '../shared/due-work-loop.ts';
import type { SecretBox } from '../tenancy/secrets.ts';
import { DeliveryAbortedError, type WebhookSender } from './webhook-sender.ts';

const MAX_CACHED_BODIES = 1000;

export type WebhookDispatcher = { start(): void; stop(): Promise<void> };

/**
 * Sends due webhook deliveries and records each attempt's outcome in the delivery's stream.
 * What is due comes from the deliveries read model, so a restart resumes where the log says.
 */
export function createWebhookDispatcher(deps: {
  clock: Clock;
  eventStore: EventStore;
  readStore: ReadStore;
  projections: ProjectionRunner;
  commands: CommandHandler;
  secretBox: SecretBox;
  send: WebhookSender;
  concurrency?: number;
}): WebhookDispatcher {
  const { clock, eventStore, readStore, projections, commands, secretBox, send } = deps;
  const concurrency = deps.concurrency ?? 16;
  const deliveries = readStore.collection<WebhookDeliveryDoc>(COLLECTIONS.webhookDeliveries);
  const endpoints = readStore.collection<WebhookEndpointDoc>(COLLECTIONS.webhookEndpoints);
  const inFlight = new Set<string>();
  const running = new Set<Promise<void>>();
  // One controller per attempt in flight, aborted by stop(): a listener per attempt on one shared
  // stop signal would pass the EventTarget listener limit with more than ten attempts in flight.
  const attempts = new Set<AbortController>();
  let stopped = false;
  let unsubscribe: (() => void) | null = null;

  /** Bodies are rendered from the log once and kept while their delivery may still be retried. */
  const bodies = new Map<string, string>();
  async function bodyOf(delivery: WebhookDeliveryDoc): Promise<string> {
    let body = bodies.get(delivery.id);
    if (body === undefined) {
      body = await renderWebhookBody(eventStore, delivery.source, {
        id: delivery.eventId,
        type: delivery.eventType,
        object: delivery.eventObject,
        created: delivery.firstDueAt,
      });
      if (bodies.size >= MAX_CACHED_BODIES) bodies.delete(bodies.keys().next().value!);
      bodies.set(delivery.id, body);
    }
    return body;
  }

  async function attempt(delivery: WebhookDeliveryDoc): Promise<void> {
    const controller = new AbortController();
    attempts.add(controller);
    try {
      const endpoint = await endpoints.get(delivery.endpointId);
      if (!endpoint || endpoint.deleted) return;
      const body = await bodyOf(delivery);
      const outcome = await send({
        url: endpoint.url,
        body,
        secret: secretBox.open(endpoint.sealedSecret),
        eventId: delivery.eventId,
        nowMs: clock.now(),
        signal: controller.signal,
      });
      const recorded = await commands.handle(
        webhookDeliveryAggregate,
        delivery.id,
        {
          type: 'RecordDeliveryAttempt',
          attempt: delivery.attempts + 1,
          firstDueAt: delivery.firstDueAt,
          ...outcome,
        },
        {
          organizationId: delivery.organizationId,
          environment: delivery.environment as Environment,
          actor: 'system:webhook-dispatcher',
          causationId: delivery.eventId,
        },
      );
      // Stay in flight until the read model shows this attempt, so it is not sent twice.
      if (recorded.position !== null) await projections.waitFor(recorded.position, 30_000);
      if (outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300)
        bodies.delete(delivery.id);
    } catch (error) {
      if (error instanceof DeliveryAbortedError) return;
      console.error(`[webhooks] delivery ${delivery.id} could not be recorded:`, error);
    } finally {
      attempts.delete(controller);
      inFlight.delete(delivery.id);
      if (!stopped) loop.poke();
    }
  }

  const loop = createDueWorkLoop({
    name: 'webhooks',
    clock,
    async runDue(now) {
      const free = concurrency - inFlight.size;
      if (free <= 0) return;
      const due = await deliveries.find(
        { status: 'pending', nextAttemptAt: { $lte: now } },
        { sort: { nextAttemptAt: 1 }, limit: free + inFlight.size },
      );
      for (const delivery of due) {
        if (inFlight.has(delivery.id) || inFlight.size >= concurrency) continue;
        inFlight.add(delivery.id);
        const run = attempt(delivery);
        running.add(run);
        void run.finally(() => running.delete(run));
      }
    },
    async nextDue() {
      const candidates = await deliveries.find(
        { status: 'pending', nextAttemptAt: { $ne: null } },
        { sort: { nextAttemptAt: 1 }, limit: inFlight.size + 1 },
      );
      return candidates.find((d) => !inFlight.has(d.id))?.nextAttemptAt ?? null;
    },
  });

  return {
    start() {
      unsubscribe = projections.onAdvanced((_position, touched) => {
        if (touched.has(COLLECTIONS.webhookDeliveries)) loop.poke();
      });
      loop.poke();
    },
    async stop() {
      unsubscribe?.();
      await loop.stop();
      stopped = true;
      for (const controller of attempts) controller.abort();
      await Promise.allSettled([...running]);
    },
  };
}
