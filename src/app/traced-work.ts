import { SpanKind, type Tracer } from '@opentelemetry/api';
import type { CommandHandler } from '../actors/command-handler.ts';
import type { EventStore } from '../event-store/event-store.ts';
import type { SweepExecutor } from '../sweeper/sweeper.ts';
import { inSpan } from '../shared/tracing.ts';
import type { WebhookSender } from '../webhooks/webhook-sender.ts';

/*
 * Spans around the work a request or a background component does, as children of whatever span is
 * active (a request's, a follower batch's). Names and attributes carry kinds and ids, never
 * payloads, secrets or webhook URLs' query strings.
 */

export const tracedCommands = (commands: CommandHandler, tracer: Tracer): CommandHandler => ({
  handle: (aggregate, id, command, ctx) =>
    inSpan(
      tracer,
      `command ${aggregate.category}`,
      {
        'weir.aggregate': aggregate.category,
        'weir.command': String((command as { type?: unknown }).type ?? 'unknown'),
        'weir.actor': ctx.actor,
      },
      async (span) => {
        const result = await commands.handle(aggregate, id, command, ctx);
        if (result.position !== null) span.setAttribute('weir.log_position', result.position.toString());
        return result;
      },
    ),
  load: (aggregate, id, tenant) => commands.load(aggregate, id, tenant),
});

export const tracedAppends = (eventStore: EventStore, tracer: Tracer): EventStore => ({
  ...eventStore,
  append: (streamId, events, expected) =>
    inSpan(
      tracer,
      'event-store append',
      { 'weir.stream_category': streamId.split('-')[0]!, 'weir.events': events.length },
      () => eventStore.append(streamId, events, expected),
    ),
});

export const tracedWebhookSender =
  (send: WebhookSender, tracer: Tracer): WebhookSender =>
  (request) =>
    inSpan(
      tracer,
      'webhook delivery attempt',
      { 'weir.webhook_event_id': request.eventId, 'server.address': new URL(request.url).host },
      async (span) => {
        const outcome = await send(request);
        if (outcome.statusCode !== null) span.setAttribute('http.response.status_code', outcome.statusCode);
        if (outcome.error) span.setAttribute('error.type', outcome.error.slice(0, 200));
        return outcome;
      },
      SpanKind.CLIENT,
    );

export const tracedSweepExecutor = (executor: SweepExecutor, network: string, tracer: Tracer): SweepExecutor => ({
  ...executor,
  flush: (requests, beforeSend) =>
    inSpan(tracer, 'sweep', { 'weir.network': network, 'weir.deposits': requests.length }, async (span) => {
      const result = await executor.flush(requests, beforeSend);
      const hash = (result as { transactionHash?: unknown }).transactionHash;
      if (typeof hash === 'string') span.setAttribute('weir.transaction_hash', hash);
      return result;
    }),
});
