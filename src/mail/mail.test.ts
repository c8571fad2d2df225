import test from 'ava';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { invoiceFixture } from '../../machines/invoice.fixture.ts';
import { evolveOrganization, type Organization } from '../actors/organization.ts';
import { renderInvoiceMail } from './invoice-mail.ts';
import { stableMessageId } from './mailer.ts';
import { openMailer } from './open-mailer.ts';
import { createOutboxMailer } from './outbox-mailer.ts';
import { createSmtpMailer, redactSmtpUrl } from './smtp-mailer.ts';

const org: Organization = {
  ...evolveOrganization(null, {
    type: 'OrganizationCreated',
    data: { id: 'org-1', environment: 'test', name: 'Acme <Studio> & Co', at: '2026-01-01T00:00:00.000Z' },
  })!,
  supportEmail: 'help@acme.example',
  websiteUrl: 'https://acme.example',
  addressDetails: {
    line1: '1 Main Street',
    line2: null,
    city: 'Lisbon',
    state: null,
    postalCode: '1000-001',
    country: 'PT',
  },
  brandColor: '#ff6600',
  brandLogo: 'https://acme.example/logo.png',
};

test('a reminder on the due day says the invoice is due that day, not that it was: overdue once the day has ended', (t) => {
  // Due 2026-02-01, a date (stored as its last instant): payable to the end of that UTC day.
  const reminder = (now: string) =>
    renderInvoiceMail({
      kind: 'reminder',
      invoice: invoiceFixture({ status: 'open', dueDate: '2026-02-01T23:59:59.999Z' }),
      organization: null,
      payUrl: 'http://x/pay',
      now: Date.parse(now),
    });
  t.regex(reminder('2026-02-01T18:00:00Z').subject, /is due 2026-02-01$/);
  t.true(reminder('2026-02-01T18:00:00Z').text.includes('is due on 2026-02-01'));
  t.regex(reminder('2026-02-02T00:00:00Z').subject, /was due 2026-02-01$/);
});

test('invoice mail carries the business details, branding and the pay link, escaped in HTML', (t) => {
  const mail = renderInvoiceMail({
    kind: 'invoice',
    invoice: invoiceFixture({ status: 'open' }),
    organization: org,
    customerName: 'Ada',
    payUrl: 'http://127.0.0.1/invoices/x/pay',
    now: Date.parse('2026-01-05T00:00:00Z'),
  });
  t.is(mail.subject, 'Invoice INV-0001 from Acme <Studio> & Co: 3.00 USDC due 2026-02-01');
  for (const part of [
    'Acme <Studio> & Co',
    '1 Main Street',
    'Lisbon',
    'help@acme.example',
    'https://acme.example',
    'Pay online: http://127.0.0.1/invoices/x/pay',
    'Thank you',
  ])
    t.true(mail.text.includes(part), part);
  t.true(mail.html.includes('Acme &lt;Studio&gt; &amp; Co'));
  t.false(mail.html.includes('<Studio>'));
  t.true(mail.html.includes('#ff6600'));
  t.true(mail.html.includes('https://acme.example/logo.png'));
  const reminder = renderInvoiceMail({
    kind: 'reminder',
    invoice: invoiceFixture({ status: 'open' }),
    organization: org,
    payUrl: 'http://x/pay',
    now: Date.parse('2026-02-03T00:00:00Z'),
  });
  t.regex(reminder.subject, /^Reminder: invoice INV-0001 .* was due 2026-02-01$/);
  const receipt = renderInvoiceMail({
    kind: 'receipt',
    invoice: invoiceFixture({
      status: 'paid',
      amountPaid: '300000000',
      amountRemaining: '0',
      paidAt: '2026-01-10T00:00:00.000Z',
    }),
    organization: null,
    payUrl: 'http://x/pay',
  });
  t.regex(receipt.text, /received 3.00 USDC for invoice INV-0001 on 2026-01-10/);
  t.false(receipt.text.includes('Pay online'));
});

test('a receipt for an overpaid invoice says how much more than due was received and whom to ask about it; an exact one says nothing of it', (t) => {
  const paid = (amountPaid: string) =>
    renderInvoiceMail({
      kind: 'receipt',
      invoice: invoiceFixture({
        status: 'paid',
        amountDue: '300000000',
        amountPaid,
        amountRemaining: '0',
        paidAt: '2026-01-10T00:00:00.000Z',
      }),
      organization: org,
      payUrl: null,
    });
  const over = paid('350000000');
  t.regex(
    over.text,
    /received 3.50 USDC for invoice INV-0001 on 2026-01-10\. That is 0.50 USDC more than was due; contact Acme <Studio> & Co at help@acme.example about it\./,
  );
  t.regex(over.text, /^Overpaid: 0.50 USDC$/m);
  t.regex(over.html, /Overpaid<\/td><td[^>]*>0.50 USDC</);
  t.true(over.html.includes('contact Acme &lt;Studio&gt; &amp; Co at help@acme.example about it.'));
  const exact = paid('300000000');
  t.false(exact.text.includes('more than was due'));
  t.false(exact.text.includes('Overpaid'));
  t.false(exact.html.includes('Overpaid'));
});

test('the outbox mailer writes a readable multipart .eml file', async (t) => {
  process.umask(0o022);
  const dir = await mkdtemp(join(tmpdir(), 'weir-outbox-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const mailer = openMailer({ outboxDir: join(dir, 'outbox') });
  t.regex(mailer.describe, /^outbox /);
  const mail = renderInvoiceMail({
    kind: 'invoice',
    invoice: invoiceFixture({ status: 'open' }),
    organization: org,
    payUrl: 'http://127.0.0.1/invoices/x/pay',
  });
  const { id } = await mailer.send({ to: 'payer@example.com', ...mail });
  t.truthy(id);
  const files = await readdir(join(dir, 'outbox'));
  t.is(files.length, 1);
  t.true(files[0]!.endsWith('.eml'));
  // Mails hold customers' data: for the owner alone, whatever the umask (022 here).
  t.is((await stat(join(dir, 'outbox'))).mode & 0o777, 0o700);
  t.is((await stat(join(dir, 'outbox', files[0]!))).mode & 0o777, 0o600);
  const eml = await readFile(join(dir, 'outbox', files[0]!), 'utf8');
  t.regex(eml, /^To: payer@example\.com\r$/m);
  t.regex(eml, /^From: Weir <no-reply@weir\.localhost>\r$/m);
  t.regex(eml, /^Content-Type: multipart\/alternative;/m);
  t.regex(eml, /Content-Type: text\/plain/);
  t.regex(eml, /Content-Type: text\/html/);
  t.true(eml.includes('INV-0001'));
  t.true(eml.includes('Acme <Studio> & Co'), 'the business name is in the (plain text) body');
  // Two messages never overwrite each other.
  await createOutboxMailer({ dir: join(dir, 'outbox') }).send({
    to: 'b@example.com',
    subject: 's',
    text: 't',
    html: '<p>t</p>',
  });
  t.is((await readdir(join(dir, 'outbox'))).length, 2);
});

test("a keyed message keeps one Message-ID across hand-overs, on the sender's domain; unkeyed ones get a new one each", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'weir-outbox-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const mailer = createOutboxMailer({ dir, from: 'Acme <billing@acme.example>' });
  const message = { to: 'payer@example.com', subject: 's', text: 't', html: '<p>t</p>' };
  const keyed = [
    await mailer.send({ ...message, key: 'f3c1b2a0-mail' }),
    await mailer.send({ ...message, key: 'f3c1b2a0-mail' }),
  ];
  const unkeyed = [await mailer.send(message), await mailer.send(message)];
  t.deepEqual(
    keyed.map((m) => m.id),
    ['f3c1b2a0-mail@acme.example', 'f3c1b2a0-mail@acme.example'],
  );
  t.not(unkeyed[0]!.id, unkeyed[1]!.id);
  const headers = await Promise.all(
    (await readdir(dir))
      .sort()
      .map(async (file) => /^Message-ID: (.*)\r$/m.exec(await readFile(join(dir, file), 'utf8'))?.[1]),
  );
  t.deepEqual(headers.slice(0, 2), ['<f3c1b2a0-mail@acme.example>', '<f3c1b2a0-mail@acme.example>']);
  t.is(stableMessageId('a b<c>', 'no-reply@weir.localhost'), '<a_b_c_@weir.localhost>');
  t.is(stableMessageId('k', 'not an address'), '<k@weir.localhost>');
});

/** Just enough SMTP to accept messages: greeting, EHLO/HELO, MAIL, RCPT, DATA, QUIT. */
async function startTinySmtpServer() {
  const received: { from: string; to: string[]; data: string }[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.setEncoding('utf8');
    let buffer = '';
    let inData = false;
    let current = { from: '', to: [] as string[], data: '' };
    socket.write('220 tiny.test ESMTP\r\n');
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      for (;;) {
        if (inData) {
          const end = buffer.indexOf('\r\n.\r\n');
          if (end === -1) return;
          current.data = buffer.slice(0, end);
          buffer = buffer.slice(end + 5);
          inData = false;
          received.push(current);
          current = { from: '', to: [], data: '' };
          socket.write('250 OK queued\r\n');
          continue;
        }
        const newline = buffer.indexOf('\r\n');
        if (newline === -1) return;
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 2);
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'EHLO' || verb === 'HELO') socket.write('250 tiny.test\r\n');
        else if (verb === 'MAIL') {
          current.from = line;
          socket.write('250 OK\r\n');
        } else if (verb === 'RCPT') {
          current.to.push(line);
          socket.write('250 OK\r\n');
        } else if (verb === 'DATA') {
          inData = true;
          socket.write('354 End data with <CR><LF>.<CR><LF>\r\n');
        } else if (verb === 'QUIT') {
          socket.end('221 Bye\r\n');
        } else if (verb === 'RSET' || verb === 'NOOP') socket.write('250 OK\r\n');
        else socket.write('502 Command not implemented\r\n');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.address() as AddressInfo).port,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

test('the SMTP mailer delivers to an SMTP server named by URL', async (t) => {
  const smtp = await startTinySmtpServer();
  t.teardown(() => smtp.close());
  const mailer = createSmtpMailer({ smtpUrl: `smtp://127.0.0.1:${smtp.port}`, from: 'Acme <billing@acme.example>' });
  t.teardown(() => mailer.close());
  const mail = renderInvoiceMail({
    kind: 'invoice',
    invoice: invoiceFixture({ status: 'open' }),
    organization: org,
    payUrl: 'http://127.0.0.1/invoices/x/pay',
  });
  const { id } = await mailer.send({ to: 'payer@example.com', ...mail, key: 'mail-42' });
  t.is(id, 'mail-42@acme.example');
  t.is(smtp.received.length, 1);
  const message = smtp.received[0]!;
  t.regex(message.from, /MAIL FROM:<billing@acme\.example>/);
  t.regex(message.to[0]!, /RCPT TO:<payer@example\.com>/);
  t.true(message.data.includes('INV-0001'));
  t.regex(message.data, /multipart\/alternative/);
  t.regex(message.data, /^Message-ID: <mail-42@acme\.example>\r$/m);
});

test('SMTP credentials never appear in descriptions or errors', async (t) => {
  t.is(redactSmtpUrl('smtp://user:s3cret@mail.example:587'), 'smtp://***@mail.example:587');
  const mailer = openMailer({ smtpUrl: 'smtp://user:s3cret@127.0.0.1:1', outboxDir: '/nonexistent' });
  t.false(mailer.describe.includes('s3cret'));
  const error = await t.throwsAsync(mailer.send({ to: 'a@example.com', subject: 's', text: 't', html: 'h' }));
  t.false(error!.message.includes('s3cret'));
  t.regex(error!.message, /127\.0\.0\.1/);
  mailer.close();
});

test('a recurring invoice mail says the period it bills, from its issue date to the next one; a one-time invoice has no period', (t) => {
  const renewal = renderInvoiceMail({
    kind: 'invoice',
    invoice: invoiceFixture({
      status: 'open',
      invoiceType: 'recurring',
      recurring: { interval: 'month', intervalCount: 1 },
      issueDate: '2026-01-31T12:00:00.000Z',
      nextInvoice: { id: 'inv-next', issueDate: '2026-02-28T12:00:00.000Z' },
    }),
    organization: org,
    payUrl: 'http://x/pay',
  });
  t.true(renewal.text.includes('Period: 2026-01-31 – 2026-02-28'), renewal.text);
  t.regex(renewal.html, /Period<\/td><td[^>]*>2026-01-31 – 2026-02-28</);
  const once = renderInvoiceMail({
    kind: 'invoice',
    invoice: invoiceFixture({ status: 'open' }),
    organization: org,
    payUrl: 'http://x/pay',
  });
  t.false(once.text.includes('Period'));
});
