import type { Mailer } from './mailer.ts';
import { createOutboxMailer } from './outbox-mailer.ts';
import { createSmtpMailer } from './smtp-mailer.ts';

/**
 * The SMTP mailer when a URL is given, else the embedded outbox (`.eml` files in `outboxDir`,
 * e.g. `<dataDir>/outbox`). `describe` says which one, without credentials, for the start-up log.
 */
export function openMailer(options: {
  smtpUrl?: string;
  outboxDir: string;
  from?: string;
}): Mailer & { describe: string; close(): void } {
  if (options.smtpUrl !== undefined && options.smtpUrl !== '') {
    const smtp = createSmtpMailer({ smtpUrl: options.smtpUrl, from: options.from });
    return { send: smtp.send, describe: `SMTP ${smtp.server}`, close: smtp.close };
  }
  const outbox = createOutboxMailer({ dir: options.outboxDir, from: options.from });
  return { send: outbox.send, describe: `outbox ${outbox.dir}`, close: () => {} };
}
