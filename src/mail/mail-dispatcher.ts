import type { CommandHandler } from '../actors/command-handler.ts';
import { mailAggregate } from '../actors/mail.ts';
import type { Environment } from '../event-store/event-store.ts';
import { MAIL_RETRY_TIMER, PENDING_MAILS, type PendingMailDoc } from '../projections/mails.projection.ts';
import type { ProjectionRunner } from '../projections/projection-runner.ts';
import { createReadModelQueue, type ReadModelQueue } from '../processing/read-model-queue.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import type { Clock } from '../shared/clock.ts';
import type { TimerHandler } from '../timers/timer-runner.ts';
import { renderInvoiceMail } from './invoice-mail.ts';
import type { Mailer } from './mailer.ts';
import { renderPaymentReceiptMail } from './payment-receipt-mail.ts';

/**
 * What a pending mail says: the invoice (or session), the customer's name and the sender as of
 * the event it follows from, which its document holds, never the records as they are when it goes
 * out; a reminder is worded (due or overdue) as of that event too.
 */
export function renderPendingMail(mail: PendingMailDoc): { subject: string; text: string; html: string } {
  if (mail.kind === 'payment_receipt')
    return renderPaymentReceiptMail({
      session: mail.session,
      receiptNumber: mail.receiptNumber,
      organization: mail.sender,
      customerName: mail.customerName,
    });
  return renderInvoiceMail({
    kind: mail.kind,
    invoice: mail.invoice,
    organization: mail.sender,
    customerName: mail.customerName,
    payUrl: mail.invoice.url,
    now: Date.parse(mail.createdAt),
  });
}

export type MailDispatcher = ReadModelQueue & {
  /** The `mail.retry` timer's handler: the next attempt of a mail whose last one failed. */
  timerHandlers: Record<string, TimerHandler>;
};

/**
 * Sends the mails that follow from events (the `pending_mails` read model): renders each from
 * what its document holds (see `renderPendingMail`), hands it to the mailer, and records in the
 * mail's own stream that it was sent, which removes it from the list. A restart therefore resumes with what is still pending and never repeats what was
 * recorded. A failed attempt is recorded too, with when to try again; that next attempt is a
 * durable timer, so one mail that cannot be delivered holds up no other, and a mail server that
 * is down is retried on the clock (1 min doubling to 1 h, never given up) until it takes the mail.
 */
export function createMailDispatcher(deps: {
  clock: Clock;
  readStore: ReadStore;
  projections: ProjectionRunner;
  commands: CommandHandler;
  mailer: Mailer;
  log?: (line: string) => void;
}): MailDispatcher {
  const { readStore, commands, mailer } = deps;
  const log = deps.log ?? ((line: string) => console.error(line));
  const pending = readStore.collection<PendingMailDoc>(PENDING_MAILS);

  /** One attempt: answers the log position of what it recorded, or null when nothing was to be done. */
  async function attempt(mail: PendingMailDoc): Promise<bigint | null> {
    const ctx = {
      organizationId: mail.organizationId,
      environment: mail.environment as Environment,
      actor: 'system:mail',
      causationId: mail._id,
    };
    // Recorded as sent already (the read model has not caught up): never a second time.
    if ((await commands.load(mailAggregate, mail._id, null)).state.sent) return null;
    const content = renderPendingMail(mail);
    let messageId: string;
    try {
      // Keyed by the mail: a second hand-over (the first one's answer lost, or a crash before
      // MailSent was recorded) carries the same Message-ID, so the recipient's mail system sees a copy.
      ({ id: messageId } = await mailer.send({ to: mail.to, ...content, key: mail._id }));
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      log(
        `[mail] ${mail.kind} mail ${mail._id} for ${mail.kind === 'payment_receipt' ? `checkout session ${mail.checkoutSessionId}` : `invoice ${mail.invoiceId}`} failed (attempt ${mail.attempts + 1}): ${reason}`,
      );
      return (
        await commands.handle(
          mailAggregate,
          mail._id,
          { type: 'RecordMailDeliveryFailed', to: mail.to, error: reason },
          ctx,
        )
      ).position;
    }
    return (await commands.handle(mailAggregate, mail._id, { type: 'RecordMailSent', to: mail.to, messageId }, ctx))
      .position;
  }

  // The pending mails, on the processor (see read-model-queue).
  const queue = createReadModelQueue<PendingMailDoc>({
    ...deps,
    name: 'mail',
    collection: PENDING_MAILS,
    sortBy: 'createdAt',
    log,
    // Only first attempts: a mail that failed waits for its retry timer.
    work: (mail) => (mail.attempts === 0 ? attempt(mail) : Promise.resolve(null)),
  });

  return {
    ...queue,
    timerHandlers: {
      [MAIL_RETRY_TIMER]: async (timer) => {
        const mail = await pending.get(timer.recordId);
        return { position: mail ? await attempt(mail) : null };
      },
    },
  };
}
