import type { Aggregate } from './aggregate.ts';
import { doublingDelay } from '../shared/backoff.ts';

/**
 * One mail that follows from an event (a reminder, a receipt, an invoice the system sent), as a
 * tiny record of its own: stream `mail-<id>`, where the id is derived from the event the mail
 * follows from. It records each failed attempt (with when to try again) and, once, that it was
 * sent, so the pending mail leaves the work list and is never sent twice.
 */
export type MailState = { sent: { to: string; messageId: string; at: string } | null; failedAttempts: number };

export type MailEvent =
  | { type: 'MailDeliveryFailed'; data: { to: string; attempt: number; error: string; retryAt: string; at: string } }
  | { type: 'MailSent'; data: { to: string; messageId: string; at: string } };

export type MailCommand =
  | { type: 'RecordMailSent'; to: string; messageId: string }
  | { type: 'RecordMailDeliveryFailed'; to: string; error: string };

const MINUTE_MS = 60_000;
/** The first retry waits a minute; each next one twice as long, at most an hour. A mail is never given up. */
export const FIRST_MAIL_RETRY_DELAY_MS = MINUTE_MS;
export const MAX_MAIL_RETRY_DELAY_MS = 60 * MINUTE_MS;

/** Wait after failed attempt `attempt` (1-based) before the next one. */
export const mailRetryDelayMs = (attempt: number): number =>
  doublingDelay(attempt, FIRST_MAIL_RETRY_DELAY_MS, MAX_MAIL_RETRY_DELAY_MS);

export const mailAggregate: Aggregate<MailState, MailEvent, MailCommand> = {
  category: 'mail',
  initialState: () => ({ sent: null, failedAttempts: 0 }),
  evolve(state, event) {
    if (event.type === 'MailSent')
      return { ...state, sent: { to: event.data.to, messageId: event.data.messageId, at: event.data.at } };
    return { ...state, failedAttempts: event.data.attempt };
  },
  decide(state, command, { now }) {
    // Once sent, a mail is done: a repeated report (a redelivered work item) records nothing.
    if (state.sent) return [];
    if (command.type === 'RecordMailSent')
      return [{ type: 'MailSent', data: { to: command.to, messageId: command.messageId, at: now } }];
    const attempt = state.failedAttempts + 1;
    const retryAt = new Date(Date.parse(now) + mailRetryDelayMs(attempt)).toISOString();
    return [{ type: 'MailDeliveryFailed', data: { to: command.to, attempt, error: command.error, retryAt, at: now } }];
  },
};
