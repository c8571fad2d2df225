import nodemailer from 'nodemailer';
import { DEFAULT_FROM, MailDeliveryError, outgoingMail, type Mailer } from './mailer.ts';

/** The URL with any user name and password replaced, safe to log or show. */
export function redactSmtpUrl(smtpUrl: string): string {
  try {
    const url = new URL(smtpUrl);
    if (url.username || url.password) {
      url.username = '***';
      url.password = '';
    }
    url.search = '';
    return url.toString();
  } catch {
    return 'smtp://(unparsable URL)';
  }
}

/**
 * Sends through an SMTP server named by a URL such as `smtp://user:pass@host:587` (STARTTLS when
 * the server offers it) or `smtps://user:pass@host:465`. The credentials are never logged: the
 * transport's own logger is off and errors name the server without them.
 */
export function createSmtpMailer(options: {
  smtpUrl: string;
  from?: string;
}): Mailer & { close(): void; server: string } {
  const server = redactSmtpUrl(options.smtpUrl);
  let url: URL;
  try {
    url = new URL(options.smtpUrl);
  } catch {
    throw new MailDeliveryError('the SMTP URL is not a valid URL; expected smtp://user:pass@host:587');
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:')
    throw new MailDeliveryError(`the SMTP URL must start with smtp:// or smtps://, not ${url.protocol}//`);
  const transport = nodemailer.createTransport({
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port ? Number(url.port) : url.protocol === 'smtps:' ? 465 : 587,
    secure: url.protocol === 'smtps:',
    auth: url.username ? { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } : undefined,
    logger: false,
    debug: false,
    connectionTimeout: 15_000,
    greetingTimeout: 15_000,
    socketTimeout: 30_000,
  });
  return {
    server,
    async send(message) {
      try {
        const info = await transport.sendMail(outgoingMail(message, options.from ?? DEFAULT_FROM));
        return { id: String(info.messageId).replace(/^<|>$/g, '') };
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        // nodemailer's messages name the host, not the password; strip any URL with userinfo anyway.
        throw new MailDeliveryError(
          `sending mail through ${server} failed: ${reason.replace(/\b(smtps?:\/\/)[^@\s/]*@/gi, '$1***@')}`,
        );
      }
    },
    close() {
      transport.close();
    },
  };
}
