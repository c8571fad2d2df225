import type { SnapshotFrom } from 'xstate';
import { machineFold, type Aggregate } from '../src/actors/aggregate.ts';
import { MAX_DELIVERY_ATTEMPTS, attemptDueAt } from '../src/webhooks/retry-schedule.ts';
import {
  type DeliveryCancelReason,
  webhookDeliveryMachine,
  type WebhookDeliveryEvent,
} from './webhook-delivery.machine.ts';

export type WebhookDeliverySnapshot = SnapshotFrom<typeof webhookDeliveryMachine>;

export type WebhookDeliveryCommand =
  | RecordDeliveryAttempt
  /** The endpoint can no longer take the delivery: end it, unless it already ended. */
  | { type: 'CancelDelivery'; reason: DeliveryCancelReason }
  /** One more attempt, now, asked for by `by` (a user or API key): see the machine for what follows. */
  | { type: 'ResendDelivery'; by: string };

type RecordDeliveryAttempt = {
  type: 'RecordDeliveryAttempt';
  attempt: number;
  /** When the first attempt was due (the event's time); later attempts are due on a fixed schedule from it. */
  firstDueAt: number;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  /** The start of the receiver's answer body, when it sent one. */
  response?: string | null;
};

export const webhookDeliveryAggregate: Aggregate<
  WebhookDeliverySnapshot,
  WebhookDeliveryEvent,
  WebhookDeliveryCommand
> = {
  category: 'webhook_delivery',
  ...machineFold(webhookDeliveryMachine),
  decide(snapshot, command, { now }) {
    if (command.type === 'ResendDelivery') {
      const { attempts, nextAttemptAt } = snapshot.context;
      // Not yet tried, or already due: the attempt a resend asks for is coming anyway.
      if (snapshot.value === 'pending' && (attempts === 0 || nextAttemptAt === null || nextAttemptAt <= now)) return [];
      if (snapshot.value === 'exhausted') return [];
      return [{ type: 'WebhookDeliveryResent', data: { attempts, at: now, by: command.by } }];
    }
    if (snapshot.value !== 'pending') return [];
    if (command.type === 'CancelDelivery') {
      const { attempts } = snapshot.context;
      return [{ type: 'WebhookDeliveryCanceled', data: { attempts, at: now, reason: command.reason } }];
    }
    if (command.attempt !== snapshot.context.attempts + 1) return [];
    const outcome = {
      attempt: command.attempt,
      at: now,
      statusCode: command.statusCode,
      error: command.error,
      durationMs: command.durationMs,
      ...(command.response !== undefined ? { response: command.response } : {}),
    };
    const ok = command.statusCode !== null && command.statusCode >= 200 && command.statusCode < 300;
    if (ok) return [{ type: 'WebhookDeliverySucceeded', data: outcome }];
    // The tenth attempt, or a resend of an ended delivery (one attempt, no retries after it).
    if (command.attempt >= MAX_DELIVERY_ATTEMPTS || snapshot.context.resent) {
      return [
        { type: 'WebhookDeliveryAttemptFailed', data: { ...outcome, nextAttemptAt: null } },
        { type: 'WebhookDeliveryFailed', data: { attempts: command.attempt, at: now } },
      ];
    }
    const next = new Date(attemptDueAt(command.firstDueAt, command.attempt + 1)).toISOString();
    return [{ type: 'WebhookDeliveryAttemptFailed', data: { ...outcome, nextAttemptAt: next } }];
  },
};
