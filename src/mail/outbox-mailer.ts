import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import { DEFAULT_FROM, outgoingMail, type Mailer } from './mailer.ts';

/**
 * The embedded mailer: every message is written as an RFC 5322 `.eml` file (multipart/alternative,
 * text and HTML) into `dir`, where a person can open it with any mail client. Nothing is sent.
 * The folder and the files are for their owner alone (0700, 0600): mails hold customers' data.
 */
export function createOutboxMailer(options: {
  dir: string;
  from?: string;
  now?: () => number;
}): Mailer & { dir: string } {
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
  const now = options.now ?? Date.now;
  let ready: Promise<unknown> | null = null;
  let sequence = 0;
  return {
    dir: options.dir,
    async send(message) {
      ready ??= mkdir(options.dir, { recursive: true, mode: 0o700 });
      await ready;
      const info = await transport.sendMail({
        ...outgoingMail(message, options.from ?? DEFAULT_FROM),
        date: new Date(now()),
      });
      const id = String(info.messageId).replace(/^<|>$/g, '');
      const stamp = new Date(now()).toISOString().replace(/[:.]/g, '-');
      const file = join(
        options.dir,
        `${stamp}-${String(++sequence).padStart(4, '0')}-${id.replace(/[^A-Za-z0-9._-]/g, '_')}.eml`,
      );
      await writeFile(file, info.message as Buffer, { flag: 'wx', mode: 0o600 });
      return { id };
    },
  };
}
