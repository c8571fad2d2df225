/** One email: plain text and HTML bodies of the same content. */
export type MailMessage = {
  to: string;
  subject: string;
  text: string;
  html: string;
  from?: string;
  /**
   * A stable id of this message (a mail's id). Every hand-over of it, such as a retry after the
   * server took it but the answer was lost, or after a crash before it was recorded as sent,
   * carries the same Message-ID (`stableMessageId`), by which mail systems recognize a copy.
   * Without it each hand-over gets a new one.
   */
  key?: string;
};

/** The mail port: hands a message to a mail system and answers its message id. */
export type Mailer = { send(message: MailMessage): Promise<{ id: string }> };

export const DEFAULT_FROM = 'Weir <no-reply@weir.localhost>';

/** Thrown when a message cannot be handed over; the message never holds credentials. */
export class MailDeliveryError extends Error {
  override readonly name = 'MailDeliveryError';
}

/** What a mailer hands to nodemailer for `message`: its sender (`defaultFrom` unless it names one), and a stable Message-ID when it is keyed. */
export function outgoingMail(message: MailMessage, defaultFrom: string) {
  const from = message.from ?? defaultFrom;
  return {
    from,
    to: message.to,
    subject: message.subject,
    text: message.text,
    html: message.html,
    ...(message.key === undefined ? {} : { messageId: stableMessageId(message.key, from) }),
  };
}

/** The Message-ID of a keyed message from `from` (`Name <user@domain>` or `user@domain`): `<key@domain>`. */
export function stableMessageId(key: string, from: string): string {
  const domain = /@([A-Za-z0-9.-]+)>?\s*$/.exec(from)?.[1] ?? 'weir.localhost';
  return `<${key.replace(/[^A-Za-z0-9._-]/g, '_')}@${domain}>`;
}
