/** One email: plain text and HTML bodies of the same content. */
export type MailMessage = { to: string; subject: string; text: string; html: string; from?: string };

/** The mail port: hands a message to a mail system and answers its message id. */
export type Mailer = { send(message: MailMessage): Promise<{ id: string }> };

export const DEFAULT_FROM = 'Weir <no-reply@weir.localhost>';

/** Thrown when a message cannot be handed over; the message never holds credentials. */
export class MailDeliveryError extends Error {
  override readonly name = 'MailDeliveryError';
}
