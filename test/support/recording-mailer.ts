import { MailDeliveryError, type Mailer, type MailMessage } from '../../src/mail/mailer.ts';

/**
 * A mailer for tests that keeps what it was given. `refuse` says which hand-overs fail (as a mail
 * server that is down or rejects a recipient would); it sees the message and the 1-based call count.
 */
export function recordingMailer(refuse: (message: MailMessage, call: number) => boolean = () => false) {
  const sent: MailMessage[] = [];
  /** Every hand-over, refused or not. */
  const attempts: MailMessage[] = [];
  let calls = 0;
  const mailer: Mailer = {
    async send(message) {
      calls += 1;
      attempts.push(message);
      if (refuse(message, calls))
        throw new MailDeliveryError(`sending mail to ${message.to} failed: connection refused`);
      sent.push(message);
      return { id: `message-${sent.length}@test` };
    },
  };
  return { mailer, sent, attempts, calls: () => calls };
}
