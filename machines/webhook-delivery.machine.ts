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
  | { type: 'WebhookDeliveryFailed'; data: { attempts: number; at: string } };

export type WebhookDeliveryContext = {
  attempts: number;
  lastOutcome: AttemptOutcome | null;
  nextAttemptAt: string | null;
};

/**
 * One event delivered to one endpoint. The delivery exists from the moment its event is in the
 * log (it starts `pending`, first attempt due at once); each attempt's outcome is recorded here.
 * After the tenth failed attempt it is `failed`.
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
  },
  actions: {
    recordAttempt: assign(({ event }) => {
      if (event.type === 'WebhookDeliveryFailed') return {};
      const { nextAttemptAt, ...outcome } = { nextAttemptAt: null, ...event.data };
      return { attempts: outcome.attempt, lastOutcome: outcome, nextAttemptAt };
    }),
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
      },
    },
    exhausted: {
      on: { WebhookDeliveryFailed: { guard: 'attemptsExhausted', target: 'failed' } },
    },
    succeeded: { type: 'final' },
    failed: { type: 'final' },
  },
});
