import { assign, setup } from 'xstate';
import { MAX_DELIVERY_ATTEMPTS } from '../src/webhooks/retry-schedule.ts';

export type AttemptOutcome = {
  attempt: number;
  at: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  /** The start of the receiver's answer body (absent from attempts recorded before it was kept). */
  response?: string | null;
};

export type WebhookDeliveryEvent =
  | { type: 'WebhookDeliveryAttemptFailed'; data: AttemptOutcome & { nextAttemptAt: string | null } }
  | { type: 'WebhookDeliverySucceeded'; data: AttemptOutcome }
  | { type: 'WebhookDeliveryFailed'; data: { attempts: number; at: string } }
  | { type: 'WebhookDeliveryCanceled'; data: { attempts: number; at: string; reason: DeliveryCancelReason } }
  /** Someone asked for one more attempt now (a resend): the delivery is pending again, due at `at`. */
  | { type: 'WebhookDeliveryResent'; data: { attempts: number; at: string; by: string } };

/** Why a delivery ended before it succeeded or ran out of attempts: its endpoint can no longer take it. */
export type DeliveryCancelReason = 'endpoint_deleted' | 'endpoint_disabled';

export type WebhookDeliveryContext = {
  attempts: number;
  lastOutcome: AttemptOutcome | null;
  nextAttemptAt: string | null;
  /** The attempt due is a resend of an ended delivery: if it fails, the delivery ends failed (no retries). */
  resent: boolean;
};

/**
 * One event delivered to one endpoint. The delivery exists from the moment its event is in the
 * log (it starts `pending`, first attempt due at once); each attempt's outcome is recorded here.
 * After the tenth failed attempt it is `failed`. A pending delivery whose endpoint was deleted (or
 * disabled) is `canceled`: nothing more is sent. A resend makes one more attempt due now: on an
 * ended delivery it is that one attempt (failing, the delivery ends failed); on a pending one it
 * brings the next retry forward and the schedule goes on from there.
 */
export const webhookDeliveryMachine = setup({
  types: { context: {} as WebhookDeliveryContext, events: {} as WebhookDeliveryEvent },
  guards: {
    isNextAttempt: ({ context, event }) => 'attempt' in event.data && event.data.attempt === context.attempts + 1,
    attemptsLeft: ({ context, event }) =>
      !context.resent &&
      'attempt' in event.data &&
      event.data.attempt === context.attempts + 1 &&
      event.data.attempt < MAX_DELIVERY_ATTEMPTS,
    attemptsExhausted: ({ context }) => context.attempts >= MAX_DELIVERY_ATTEMPTS || context.resent,
    attemptsMatch: ({ context, event }) =>
      (event.type === 'WebhookDeliveryCanceled' || event.type === 'WebhookDeliveryResent') &&
      event.data.attempts === context.attempts,
  },
  actions: {
    recordAttempt: assign(({ event }) => {
      if (event.type !== 'WebhookDeliveryAttemptFailed' && event.type !== 'WebhookDeliverySucceeded') return {};
      const { nextAttemptAt, ...outcome } = { nextAttemptAt: null, ...event.data };
      return { attempts: outcome.attempt, lastOutcome: outcome, nextAttemptAt };
    }),
    stopRetrying: assign({ nextAttemptAt: null, resent: false }),
    resendNow: assign(({ event }) => (event.type === 'WebhookDeliveryResent' ? { nextAttemptAt: event.data.at } : {})),
    resendOnce: assign(({ event }) =>
      event.type === 'WebhookDeliveryResent' ? { nextAttemptAt: event.data.at, resent: true } : {},
    ),
  },
}).createMachine({
  id: 'webhookDelivery',
  context: { attempts: 0, lastOutcome: null, nextAttemptAt: null, resent: false },
  initial: 'pending',
  states: {
    pending: {
      on: {
        WebhookDeliverySucceeded: {
          guard: 'isNextAttempt',
          target: 'succeeded',
          actions: ['recordAttempt', 'stopRetrying'],
        },
        WebhookDeliveryAttemptFailed: [
          { guard: 'attemptsLeft', actions: 'recordAttempt' },
          { guard: 'isNextAttempt', target: 'exhausted', actions: 'recordAttempt' },
        ],
        WebhookDeliveryCanceled: { guard: 'attemptsMatch', target: 'canceled', actions: 'stopRetrying' },
        WebhookDeliveryResent: { guard: 'attemptsMatch', actions: 'resendNow' },
      },
    },
    exhausted: {
      on: { WebhookDeliveryFailed: { guard: 'attemptsExhausted', target: 'failed', actions: 'stopRetrying' } },
    },
    // Ended, but a resend makes them pending again for one attempt (so not final states).
    succeeded: { on: { WebhookDeliveryResent: { guard: 'attemptsMatch', target: 'pending', actions: 'resendOnce' } } },
    failed: { on: { WebhookDeliveryResent: { guard: 'attemptsMatch', target: 'pending', actions: 'resendOnce' } } },
    canceled: { on: { WebhookDeliveryResent: { guard: 'attemptsMatch', target: 'pending', actions: 'resendOnce' } } },
  },
});
