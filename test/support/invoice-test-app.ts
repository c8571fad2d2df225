import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import type { Mailer } from '../../src/mail/mailer.ts';
import type { Clock } from '../../src/shared/clock.ts';
import { startTestWeir } from './weir-harness.ts';

/** The real Weir for the invoice tests, with the outbox folder its mails land in. */
export async function startInvoiceTestApp(t: ExecutionContext, options: { clock?: Clock; mailer?: Mailer } = {}) {
  const weir = await startTestWeir(
    t,
    {},
    { ...(options.clock ? { clock: options.clock } : {}), ...(options.mailer ? { mailer: options.mailer } : {}) },
  );
  return { ...weir, outboxDir: join(weir.dataDir, 'outbox') };
}
