import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import Koa from 'koa';
import { checkoutSessionAggregate } from '../../../machines/checkout-session.aggregate.ts';
import { sessionFixture } from '../../../machines/checkout-session.fixture.ts';
import { alwaysConflictingStore } from '../../../test/support/counting-stores.ts';
import { createCommandHandler } from '../../actors/command-handler.ts';
import { createSqliteEventStore } from '../../event-store/sqlite-event-store.ts';
import { createEmbeddedReadStore } from '../../read-store/embedded-read-store.ts';
import { createManualClock } from '../../shared/clock.ts';
import { ConflictError, UpstreamError, ValidationError } from '../../shared/errors.ts';
import type { ApiState } from '../api-context.ts';
import { errorMiddleware } from '../middleware.ts';
import { paymentLinkErrorPages } from './hosted-payment-link.ts';

/** `/pay/` answering with what `thrown` gives, behind the link pages' error pages as app.ts mounts them. */
async function answerTo(t: import('ava').ExecutionContext, thrown: Error, logged: unknown[] = []) {
  const app = new Koa<ApiState>();
  app.silent = true;
  app.use(errorMiddleware());
  app.use(paymentLinkErrorPages(createEmbeddedReadStore(), (_ctx, error) => logged.push(error)));
  app.use(() => {
    throw thrown;
  });
  const server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/pay/not-a-link`, {
    method: 'POST',
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

test('a passing failure behind a link page (a service not answering, a busy record with or without Retry-After, a chain reorganizing) is a 503 page to try again, never its message', async (t) => {
  for (const thrown of [
    new UpstreamError('chain 7357: every RPC endpoint failed (http://10.0.0.5:8545)'),
    new ConflictError('stream payment_link-x is being written', 'conflict', 2),
    new ConflictError('stream payment_link-x is being written'),
    new ConflictError('the chain is reorganizing around block 7, which holds payment_link x', 'chain_reorganizing'),
  ]) {
    const answer = await answerTo(t, thrown);
    t.is(answer.status, 503, thrown.message);
    t.regex(answer.headers.get('content-type') ?? '', /^text\/html/);
    t.regex(answer.text, /<h1>Payment could not be started<\/h1>/);
    t.regex(answer.text, /Nothing has been charged\. Please try again in a moment\./);
    t.notRegex(answer.text, /RPC|10\.0\.0\.5|stream|payment_link/);
  }
  t.is((await answerTo(t, new ConflictError('busy', 'conflict', 2))).headers.get('retry-after'), '2');
});

test('a refusal that is not a passing one goes on to the API error as before: the route answers those itself; a lasting conflict too', async (t) => {
  const answer = await answerTo(t, new ValidationError('x', 'is wrong'));
  t.is(answer.status, 400);
  t.regex(answer.headers.get('content-type') ?? '', /json/);
  const lasting = await answerTo(
    t,
    new ConflictError('payment link x is one_time and has been paid', 'payment_link_used'),
  );
  t.is(lasting.status, 409);
  t.regex(lasting.headers.get('content-type') ?? '', /json/);
});

test('an unexpected error behind a link page is a 500 page saying it was ours, logged, without its message or stack (was the JSON 500)', async (t) => {
  const logged: unknown[] = [];
  const bug = new TypeError("Cannot read properties of undefined (reading 'amountDue')");
  const answer = await answerTo(t, bug, logged);
  t.is(answer.status, 500);
  t.regex(answer.headers.get('content-type') ?? '', /^text\/html/);
  t.regex(answer.text, /<h1>Something went wrong<\/h1>/);
  t.regex(answer.text, /Something went wrong on our side\. Please try again later\./);
  t.notRegex(answer.text, /amountDue|TypeError|\.ts:\d+|processing_error/);
  t.deepEqual(logged, [bug], 'logged as the error middleware logs it');
});

test('a record still busy after the command handler’s retries is the 503 page to try again with Retry-After, not logged (was the bare revision error: the 500 page, logged)', async (t) => {
  const eventStore = createSqliteEventStore({ path: ':memory:' });
  t.teardown(() => eventStore.close());
  const commands = createCommandHandler({
    eventStore: alwaysConflictingStore(eventStore),
    clock: createManualClock(),
    maxAttempts: 2,
  });
  const session = sessionFixture();
  const tenant = { organizationId: 'org-1', environment: 'test' as const, actor: 'payer' };
  const thrown = await t.throwsAsync(
    commands.handle(checkoutSessionAggregate, session.id, { type: 'CreateCheckoutSession', session }, tenant),
  );
  const logged: unknown[] = [];
  const answer = await answerTo(t, thrown, logged);
  t.is(answer.status, 503);
  t.regex(answer.text, /<h1>Payment could not be started<\/h1>/);
  t.is(answer.headers.get('retry-after'), '1');
  t.deepEqual(logged, [], 'a passing refusal, not an unexpected error');
});
