import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import Koa from 'koa';
import type Router from '@koa/router';
import { createCommandHandler } from '../../src/actors/command-handler.ts';
import { createCheckoutSessionCreator } from '../../src/actors/create-checkout-session.ts';
import { createInvoicePaymentLinker } from '../../src/actors/invoice-payments.ts';
import { createLineItemResolver } from '../../src/actors/line-items.ts';
import { openBus } from '../../src/bus/open-bus.ts';
import { noGasFees } from '../../src/chain-ingest/gas-fee.ts';
import { createMatcher } from '../../src/chain-ingest/matcher.ts';
import { combineRails } from '../../src/chain-ingest/rail.ts';
import { createTestRail } from '../../src/chain-ingest/test-rail.ts';
import { openEventStore } from '../../src/event-store/open-event-store.ts';
import { createOutboxMailer } from '../../src/mail/outbox-mailer.ts';
import type { Mailer } from '../../src/mail/mailer.ts';
import { ALL_PROJECTIONS, EMBEDDED_INDEXED_FIELDS } from '../../src/projections/all-projections.ts';
import { customersProjection } from '../../src/projections/customers.projection.ts';
import { invoicesProjection } from '../../src/projections/invoices.projection.ts';
import { createProjectionRunner } from '../../src/projections/projection-runner.ts';
import type { ApiState } from '../../src/read-api/api-context.ts';
import { createApiApp } from '../../src/read-api/app.ts';
import { compose } from '../../src/read-api/compose.ts';
import { authMiddleware, errorMiddleware, jsonBodyMiddleware } from '../../src/read-api/middleware.ts';
import { hostedInvoiceRoutes } from '../../src/read-api/routes/hosted-invoice.ts';
import { invoiceRoutes } from '../../src/read-api/routes/invoices.ts';
import { openReadStore } from '../../src/read-store/open-read-store.ts';
import { createSystemClock, type Clock } from '../../src/shared/clock.ts';
import { createSecretBox, loadMasterKey } from '../../src/tenancy/secrets.ts';
import { createTimerRunner } from '../../src/timers/timer-runner.ts';
import { ADMIN_TOKEN } from './weir-harness.ts';

/**
 * Weir's real parts plus the invoice pieces, until they are wired into `startWeir`: the real
 * API app (admin, organization, checkout sessions, hosted checkout) behind a dispatcher that
 * sends `/api/v1/invoices` and `/invoices/` to the invoice routers; projections with the
 * invoices projection; the matcher, timers and the invoice payment linker.
 */
export async function startInvoiceTestApp(t: ExecutionContext, options: { clock?: Clock; mailer?: Mailer } = {}) {
  const dataDir = await mkdtemp(join(tmpdir(), 'weir-invoice-test-'));
  const clock = options.clock ?? createSystemClock();
  const eventStore = await openEventStore({ dataDir });
  const readStore = await openReadStore({ embeddedIndexedFields: EMBEDDED_INDEXED_FIELDS, embeddedWrites: 'trusted' });
  const bus = await openBus({});
  const secretBox = createSecretBox(loadMasterKey({ keyFile: join(dataDir, 'master.key') }));
  const rail = combineRails([createTestRail()]);
  const commands = createCommandHandler({ eventStore, clock });
  const projections = createProjectionRunner({ eventStore, readStore, projections: [...ALL_PROJECTIONS, customersProjection, invoicesProjection] });
  await projections.start();
  const matcher = createMatcher({ bus, readStore, commands, projections, log: () => {} });
  await matcher.start();
  const timers = createTimerRunner({ clock, readStore, projections, commands });
  timers.start();
  const linker = createInvoicePaymentLinker({ readStore, projections, commands, log: () => {} });
  linker.start();

  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const outboxDir = join(dataDir, 'outbox');
  const mailer = options.mailer ?? createOutboxMailer({ dir: outboxDir });
  const lineItems = createLineItemResolver({ readStore, commands });
  const createCheckoutSession = createCheckoutSessionCreator({ clock, readStore, commands, rail, lineItems, publicUrl: url, gasFees: noGasFees });
  const deps = { clock, eventStore, readStore, commands, projections, rail, secretBox, publicUrl: url, createCheckoutSession, mailer };
  const inner = createApiApp({ ...deps, adminToken: ADMIN_TOKEN });
  const mounted = (router: Router<ApiState>) => [router.routes(), router.allowedMethods()] as unknown as Koa.Middleware<ApiState>[];
  const invoiceApi = compose<ApiState>([authMiddleware(readStore), jsonBodyMiddleware(), ...mounted(invoiceRoutes(deps))]);
  const hosted = compose<ApiState>([jsonBodyMiddleware(), ...mounted(hostedInvoiceRoutes(deps))]);
  const rest = compose<ApiState>(inner.middleware);
  const app = new Koa<ApiState>();
  app.silent = true;
  app.use(errorMiddleware());
  app.use((ctx, next) => {
    if (ctx.path === '/api/v1/invoices' || ctx.path.startsWith('/api/v1/invoices/')) return invoiceApi(ctx, next);
    if (ctx.path.startsWith('/invoices/')) return hosted(ctx, next);
    return rest(ctx, next);
  });
  server.on('request', app.callback());

  t.teardown(async () => {
    await new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); });
    await linker.stop();
    await matcher.stop();
    await timers.stop();
    await projections.stop();
    await bus.close();
    await readStore.close();
    await eventStore.close();
    await rm(dataDir, { recursive: true, force: true });
  });
  return { url, dataDir, outboxDir, clock, eventStore, readStore, bus, commands, projections, linker };
}
