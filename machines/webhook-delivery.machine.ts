import { assign, setup } from 'xstate';
import { MAX_DELIVERY_ATTEMPTS } from '../src/webhooks/retry-schedule.ts';

export type AttemptOutcome = {
  attempt: number;
  at: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
};

export type WebhookDeliveryEvent =
  | { type: 'WebhookDeliveryAttemptFailed'; data: AttemptOutcome & { nextAttemptAt: string | null } }
  | { type: 'WebhookDeliverySucceeded'; data: AttemptOutcome }
  | { type: 'WebhookDeliveryFailed'; data: { attempts: number; at: string } }
  | { type: 'WebhookDeliveryCanceled'; data: { attempts: number; at: string; reason: DeliveryCancelReason } };

/** Why a delivery ended before it succeeded or ran out of attempts: its endpoint can no longer take it. */
export type DeliveryCancelReason = 'endpoint_deleted' | 'endpoint_disabled';

export type WebhookDeliveryContext = {
  attempts: number;
  lastOutcome: AttemptOutcome | null;
  nextAttemptAt: string | null;
};

/**
 * One event delivered to one endpoint. The delivery exists from the moment its event is in the
 * log (it starts `pending`, first attempt due at once); each attempt's outcome is recorded here.
 * After the tenth failed attempt it is `failed`. A pending delivery whose endpoint was deleted (or
 * disabled) is `canceled`: nothing more is sent.
 */
export const webhookDeliveryMachine = setup({
  types: { context: {} as WebhookDeliveryContext, events: {} as WebhookDeliveryEvent },
  guards: {
    isNextAttempt: ({ context, event }) => 'attempt' in event.data && event.data.attempt === context.attempts + 1,
    attemptsLeft: ({ context, event }) =>
      'attempt' in event.data &&
      event.data.attempt === context.attempts + 1 &&
      event.data.attempt < MAX_DELIVERY_ATTEMPTS,
    attemptsExhausted: ({ context }) => context.attempts >= MAX_DELIVERY_ATTEMPTS,
    attemptsMatch: ({ context, event }) =>
      event.type === 'WebhookDeliveryCanceled' && event.data.attempts === context.attempts,
  },
  actions: {
    recordAttempt: assign(({ event }) => {
      if (event.type === 'WebhookDeliveryFailed' || event.type === 'WebhookDeliveryCanceled') return {};
      const { nextAttemptAt, ...outcome } = { nextAttemptAt: null, ...event.data };
      return { attempts: outcome.attempt, lastOutcome: outcome, nextAttemptAt };
    }),
    stopRetrying: assign({ nextAttemptAt: null }),
  },
}).createMachine({
  id: 'webhookDelivery',
  context: { attempts: 0, lastOutcome: null, nextAttemptAt: null },
  initial: 'pending',
  states: {
    pending: {
      on: {
        WebhookDeliverySucceeded: { guard: 'isNextAttempt', target: 'succeeded', actions: 'recordAttempt' },
        WebhookDeliveryAttemptFailed: [
          { guard: 'attemptsLeft', actions: 'recordAttempt' },
          { guard: 'isNextAttempt', target: 'exhausted', actions: 'recordAttempt' },
        ],
        WebhookDeliveryCanceled: { guard: 'attemptsMatch', target: 'canceled', actions: 'stopRetrying' },
      },
    },
    exhausted: {
      on: { WebhookDeliveryFailed: { guard: 'attemptsExhausted', target: 'failed' } },
    },
    succeeded: { type: 'final' },
    failed: { type: 'final' },
    canceled: { type: 'final' },
  },
});
