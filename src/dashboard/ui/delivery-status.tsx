import type { WebhookDeliveryDoc } from '../../projections/collections.ts';
import { Badge, DateTime, type Tone } from './components.tsx';

/** What a merchant needs to know of a delivery: arrived, being retried, given up on, or not tried yet. */
export type DeliveryState = 'delivered' | 'retrying' | 'failed' | 'pending';

export type DeliveryStatusView = {
  state: DeliveryState;
  tone: Tone;
  text: string;
  /** Why it failed, in a few words (attempts run out, endpoint gone). */
  why: string | null;
  /** When the next attempt is due (ms), if one is. */
  nextAttemptAt: number | null;
};

const CANCEL_REASONS: Record<string, string> = {
  endpoint_disabled: 'endpoint disabled',
  endpoint_deleted: 'endpoint deleted',
};

const answeredOk = (statusCode: number | null | undefined): boolean =>
  statusCode != null && statusCode >= 200 && statusCode < 300;

/**
 * The delivery's status in words. The read model's `pending` covers both a delivery not tried yet
 * and one whose attempts failed and is retried; one with failed attempts and no next attempt has
 * given up (its `failed` may not be folded in yet), so it is never shown as waiting.
 */
export function deliveryStatusOf(d: WebhookDeliveryDoc): DeliveryStatusView {
  const plural = (n: number) => `${n} attempt${n === 1 ? '' : 's'}`;
  const gaveUp: DeliveryStatusView = {
    state: 'failed',
    tone: 'danger',
    text: 'Failed',
    why: `gave up after ${plural(d.attempts)}`,
    nextAttemptAt: null,
  };
  switch (d.status) {
    case 'succeeded':
      return { state: 'delivered', tone: 'success', text: 'Delivered', why: null, nextAttemptAt: null };
    case 'failed':
      return gaveUp;
    case 'canceled': {
      const reason = d.canceled ? (CANCEL_REASONS[d.canceled.reason] ?? d.canceled.reason) : 'endpoint gone';
      return { state: 'failed', tone: 'danger', text: 'Failed', why: reason, nextAttemptAt: null };
    }
    case 'pending': {
      const last = d.log.at(-1);
      const lastFailed = last !== undefined && !answeredOk(last.statusCode);
      if (lastFailed && d.nextAttemptAt === null) return gaveUp;
      if (lastFailed)
        return { state: 'retrying', tone: 'warning', text: 'Retrying', why: null, nextAttemptAt: d.nextAttemptAt };
      // Not tried yet (due at once), or resent after it was delivered: due now, unless a resend said when.
      const resent = d.attempts > 0 ? d.nextAttemptAt : null;
      return { state: 'pending', tone: 'info', text: 'Pending', why: null, nextAttemptAt: resent };
    }
  }
}

/** The delivery's status badge, with why it failed or when it is tried next. */
export function DeliveryStatus({
  delivery,
  timeZone,
}: {
  delivery: WebhookDeliveryDoc;
  timeZone: string;
}): JSX.Element {
  const view = deliveryStatusOf(delivery);
  return (
    <span class="delivery-status">
      <Badge tone={view.tone} label={view.text} />
      {view.why !== null ? <span class="muted small" safe>{` ${view.why}`}</span> : ''}
      {view.nextAttemptAt !== null ? (
        <span class="muted small">
          {' next try '}
          <DateTime iso={new Date(view.nextAttemptAt).toISOString()} timeZone={timeZone} />
        </span>
      ) : (
        ''
      )}
    </span>
  );
}
