import test from 'ava';
import type { Aggregate } from '../actors/aggregate.ts';
import { createCommandHandler, type CommandHandler } from '../actors/command-handler.ts';
import type { EventStore, RecordedEvent } from '../event-store/event-store.ts';
import { createSqliteEventStore } from '../event-store/sqlite-event-store.ts';
import { createSqliteReadStore } from '../read-store/sqlite-read-store.ts';
import { createManualClock } from '../shared/clock.ts';
import { InvalidStateError, NotFoundError } from '../shared/errors.ts';
import { commandFor, eventsOfInstance, isEffect, type EffectHandler, type Workflow } from './workflow.ts';
import { createWorkflowRunner, type WorkflowInstanceDoc, workflowInstances } from './workflow-runner.ts';

/*
 * The runner over a real SQLite log, a real SQLite read store and the real command handler, with a
 * toy domain: an order reserves stock per line, and releases it when canceled.
 */

type Stock = { reserved: boolean; released: boolean };
type StockEvent = { type: 'StockReserved'; data: object } | { type: 'StockReleased'; data: object };
type StockCommand = { type: 'Reserve' } | { type: 'Release' };

const stockAggregate: Aggregate<Stock, StockEvent, StockCommand> = {
  category: 'stock',
  initialState: () => ({ reserved: false, released: false }),
  evolve: (stock, event) =>
    event.type === 'StockReserved' ? { ...stock, reserved: true } : { ...stock, released: true },
  decide(stock, command) {
    if (command.type === 'Reserve') return stock.reserved ? [] : [{ type: 'StockReserved', data: {} }];
    if (!stock.reserved) throw new InvalidStateError('nothing is reserved');
    return stock.released ? [] : [{ type: 'StockReleased', data: {} }];
  },
};

type OrderState = { lines: string[] };
const ORDER = 'order-';

const orders: Workflow<OrderState> = {
  name: 'test-orders',
  version: 1,
  categories: ['order'],
  aggregates: [stockAggregate],
  correlate: (event) => event.streamId.slice(ORDER.length),
  initialState: () => ({ lines: [] }),
  evolve: (state, event) =>
    event.type === 'OrderPlaced' ? { lines: (event.data as { lines: string[] }).lines } : state,
  decide(event, state) {
    const order = event.streamId.slice(ORDER.length);
    const context = { organizationId: 'org-1', environment: 'test' as const, actor: 'system:test', causationId: order };
    if (event.type === 'OrderPlaced' && state.lines.length === 0)
      return (event.data as { lines: string[] }).lines.map((line) =>
        commandFor(stockAggregate, `${order}:${line}`, { type: 'Reserve' }, context),
      );
    if (event.type === 'OrderCanceled')
      return [...state.lines, 'never-reserved'].map((line) =>
        commandFor(stockAggregate, `${order}:${line}`, { type: 'Release' }, context),
      );
    return [];
  },
};

let nextEventId = 0;
/** One event appended to order `order`'s stream. */
const append = (eventStore: EventStore, order: string, type: string, data: object = {}): Promise<void> =>
  appendTo(eventStore, `${ORDER}${order}`, type, data);

async function appendTo(eventStore: EventStore, stream: string, type: string, data: object = {}): Promise<void> {
  const existing = await eventStore.readStream(stream);
  await eventStore.append(
    stream,
    [
      {
        id: `00000000-0000-4000-8000-${String(++nextEventId).padStart(12, '0')}`,
        type,
        data: data as RecordedEvent['data'],
        metadata: {
          organizationId: 'org-1',
          environment: 'test',
          actor: 'test',
          correlationId: 'c',
          occurredAt: '2026-01-01T00:00:00.000Z',
        },
      },
    ],
    existing.length ? existing.length - 1 : 'no_stream',
  );
}

function setUp() {
  const clock = createManualClock(Date.parse('2026-01-01T00:00:00.000Z'));
  const eventStore = createSqliteEventStore({ path: ':memory:' });
  const readStore = createSqliteReadStore({ path: ':memory:', indexedFields: ['pending'] });
  const commands = createCommandHandler({ eventStore, clock });
  /** Every command sent, as `Reserve o1:a`. */
  const calls: string[] = [];
  const lines: string[] = [];
  const counting = (handle: CommandHandler['handle']): Pick<CommandHandler, 'handle'> => ({
    handle(aggregate, id, command, ctx) {
      calls.push(`${(command as { type: string }).type} ${id}`);
      return handle(aggregate, id, command, ctx);
    },
  });
  const runner = (
    handle: CommandHandler['handle'] = commands.handle,
    workflow: Workflow<OrderState> = orders,
    effects?: Record<string, EffectHandler>,
  ) =>
    createWorkflowRunner({
      workflow,
      eventStore,
      readStore,
      commands: counting(handle),
      clock,
      log: (line) => lines.push(line),
      batchSize: 2,
      ...(effects ? { effects } : {}),
    });
  const stockLog = async () =>
    (await eventStore.readAll(null, 1000))
      .filter((e) => e.streamId.startsWith('stock-'))
      .map((e) => `${e.streamId.slice('stock-'.length)} ${e.type}`)
      .sort();
  const instance = (id: string) => readStore.collection<WorkflowInstanceDoc>(workflowInstances(orders.name)).get(id);
  return { clock, eventStore, readStore, commands, calls, lines, runner, stockLog, instance };
}

/** Lets promises run, no time passing on any clock, until `done()` holds. */
async function until(done: () => boolean, what: string): Promise<void> {
  for (let turn = 0; turn < 500 && !done(); turn++) await new Promise((resolve) => setImmediate(resolve));
  if (!done()) throw new Error(`expected ${what}`);
}

test('a crash after the state and its commands were stored, before they were all sent: the next run sends them, decides nothing twice, and each effect happens once', async (t) => {
  const { eventStore, calls, lines, runner, stockLog, instance, readStore } = setUp();
  await append(eventStore, 'o1', 'OrderPlaced', { lines: ['a', 'b', 'c'] });
  await append(eventStore, 'o1', 'OrderCanceled');
  await append(eventStore, 'o2', 'OrderPlaced', { lines: ['d'] });

  // The first run dies while sending its second command: it never answers.
  const crashing = runner((aggregate, id, command, ctx) =>
    id === 'o1:b'
      ? new Promise(() => {})
      : createCommandHandler({ eventStore, clock: createManualClock() }).handle(aggregate, id, command, ctx),
  );
  void crashing.runOnce();
  await until(() => calls.includes('Reserve o1:b'), 'the second command sent');
  t.deepEqual(await stockLog(), ['o1:a StockReserved']);
  // The batch (o1's two events) was folded and stored with its position before its commands were sent.
  t.like(await instance('o1'), { pending: true, position: '2' });
  const decidedForO1 = [
    'Reserve o1:a',
    'Reserve o1:b',
    'Reserve o1:c',
    'Release o1:a',
    'Release o1:b',
    'Release o1:c',
    'Release o1:never-reserved',
  ];
  t.deepEqual(
    (await instance('o1'))!.commands.map((c) => (isEffect(c) ? c.effect : `${c.command.type} ${c.id}`)),
    decidedForO1,
  );
  t.is(await readStore.getCheckpoint('workflow:test-orders'), 2n, 'o2 was never read');
  t.is(await instance('o2'), null);

  // The next run (a restart on the same stores).
  calls.length = 0;
  const next = runner();
  await next.runOnce();
  // What the crash left unsent, from its first command (sent again: its decider answers nothing), then
  // o2's event; o1's events are not decided again.
  t.deepEqual(calls, [...decidedForO1, 'Reserve o2:d']);
  t.deepEqual(await stockLog(), [
    'o1:a StockReleased',
    'o1:a StockReserved',
    'o1:b StockReleased',
    'o1:b StockReserved',
    'o1:c StockReleased',
    'o1:c StockReserved',
    'o2:d StockReserved',
  ]);
  t.true(lines.some((l) => l.includes('Release of stock o1:never-reserved refused: nothing is reserved')));
  t.like(await instance('o1'), { pending: false, commands: [] });
  t.is(next.position(), await eventStore.headPosition());
  t.is(await readStore.getCheckpoint('workflow:test-orders'), await eventStore.headPosition());

  // Run again over the same log: nothing is sent.
  calls.length = 0;
  await next.runOnce();
  t.deepEqual(calls, []);
});

test('a command that fails is tried again on the clock, backing off, holding back its instance’s later commands while others go on; it follows the log once started', async (t) => {
  const { clock, eventStore, calls, lines, runner, stockLog, commands } = setUp();
  let failuresLeft = 2;
  const flaky = runner((aggregate, id, command, ctx) => {
    if (id === 'o1:a' && failuresLeft > 0) {
      failuresLeft--;
      return Promise.reject(new Error('the event store is unreachable'));
    }
    return commands.handle(aggregate, id, command, ctx);
  });
  await append(eventStore, 'o1', 'OrderPlaced', { lines: ['a', 'b'] });
  await append(eventStore, 'o2', 'OrderPlaced', { lines: ['c'] });
  await flaky.start();
  t.teardown(() => flaky.stop());
  await until(() => calls.includes('Reserve o2:c'), 'the other order handled');
  await flaky.runOnce();
  t.deepEqual(await stockLog(), ['o2:c StockReserved'], 'o1:b waits behind o1:a');
  t.true(lines.some((l) => l.includes('Reserve of stock o1:a failed (attempt 1)')));

  // Followed live: a new order is handled while o1 waits.
  await append(eventStore, 'o3', 'OrderPlaced', { lines: ['e'] });
  await until(() => calls.includes('Reserve o3:e'), 'the live order handled');

  clock.advanceBy(1000);
  await until(() => lines.some((l) => l.includes('failed (attempt 2)')), 'the second try');
  clock.advanceBy(1999);
  await flaky.runOnce();
  t.false((await stockLog()).includes('o1:a StockReserved'), 'not before the doubled wait');
  clock.advanceBy(1);
  await until(() => calls.filter((c) => c === 'Reserve o1:b').length === 1, 'o1 sent in order');
  await flaky.runOnce();
  t.deepEqual(await stockLog(), [
    'o1:a StockReserved',
    'o1:b StockReserved',
    'o2:c StockReserved',
    'o3:e StockReserved',
  ]);
});

test('a batch whose checkpoint cannot be saved is undone and folded again on the retry: what it decided is not skipped', async (t) => {
  const { clock, eventStore, readStore, commands, lines, stockLog } = setUp();
  let saveFailures = 1;
  const fullDisk: typeof readStore = {
    ...readStore,
    async setCheckpoint(name, position) {
      if (name.startsWith('workflow:') && position !== null && saveFailures-- > 0) throw new Error('disk full');
      return readStore.setCheckpoint(name, position);
    },
  };
  const running = createWorkflowRunner({
    workflow: orders,
    eventStore,
    readStore: fullDisk,
    commands,
    clock,
    log: (line) => lines.push(line),
    batchSize: 2,
  });
  t.teardown(() => running.stop());
  await append(eventStore, 'o1', 'OrderPlaced', { lines: ['a'] });
  await running.runOnce();
  t.true(lines.some((l) => l.includes('failed (attempt 1)') && l.includes('disk full')));
  t.is(running.position(), null, 'the position stays at the stored checkpoint');
  t.deepEqual(await stockLog(), []);

  clock.advanceBy(1000);
  await until(() => running.position() !== null, 'the retry');
  await running.runOnce();
  t.deepEqual(await stockLog(), ['o1:a StockReserved'], 'the order placed in the undone batch is reserved');
});

test('states of another workflow version are dropped and rebuilt from the log', async (t) => {
  const { eventStore, calls, runner } = setUp();
  await append(eventStore, 'o1', 'OrderPlaced', { lines: ['a'] });
  await runner().runOnce();
  calls.length = 0;
  await runner(undefined, { ...orders, version: 2 }).runOnce();
  t.deepEqual(calls, ['Reserve o1:a'], 'decided again from the log (its decider answers nothing)');
  t.is((await eventStore.readStream('stock-o1:a')).length, 1);
});

test('an event correlated with another stream’s instance (`sameAs`), and later events of its stream, reach that instance; a stream never correlated is not the workflow’s', async (t) => {
  const { eventStore, calls, runner } = setUp();
  /** An order's refund streams name their order once; the workflow releases its stock at the refund's end. */
  const refunds: Workflow<OrderState> = {
    ...orders,
    name: 'test-refunds',
    categories: ['order', 'refund'],
    correlate(event) {
      if (event.streamId.startsWith(ORDER)) return event.streamId.slice(ORDER.length);
      if (event.type === 'RefundOpened') return { sameAs: `${ORDER}${(event.data as { order: string }).order}` };
      return event.type === 'RefundDone' ? null : false;
    },
    decide(event, state) {
      if (event.type !== 'RefundDone') return orders.decide(event, state);
      return state.lines.map((line) =>
        commandFor(
          stockAggregate,
          `o1:${line}`,
          { type: 'Release' },
          {
            organizationId: 'org-1',
            environment: 'test',
            actor: 'system:test',
            causationId: event.streamId,
          },
        ),
      );
    },
  };
  await append(eventStore, 'o1', 'OrderPlaced', { lines: ['a'] });
  await appendTo(eventStore, 'refund-r1', 'RefundOpened', { order: 'o1' });
  await appendTo(eventStore, 'refund-r1', 'RefundDone');
  await appendTo(eventStore, 'refund-stray', 'RefundDone');
  await runner(undefined, refunds).runOnce();
  t.deepEqual(calls, ['Reserve o1:a', 'Release o1:a']);
});

test('a stream stays with the instance its first correlated event named, though a later event names another (as `eventsOfInstance` folds it)', async (t) => {
  const { eventStore, calls, runner } = setUp();
  /** A refund names its order once; a later note on the refund names another order by mistake. */
  const refunds: Workflow<OrderState> = {
    ...orders,
    name: 'test-refund-notes',
    categories: ['order', 'refund'],
    correlate(event) {
      if (event.streamId.startsWith(ORDER)) return event.streamId.slice(ORDER.length);
      if (event.type === 'RefundOpened') return (event.data as { order: string }).order;
      return event.type === 'RefundNoted' ? 'o2' : null;
    },
    decide(event, state) {
      if (event.type !== 'RefundNoted') return orders.decide(event, state);
      const context = {
        organizationId: 'org-1',
        environment: 'test' as const,
        actor: 'system:test',
        causationId: 'r1',
      };
      return state.lines.map((line) => commandFor(stockAggregate, `o1:${line}`, { type: 'Release' }, context));
    },
  };
  await append(eventStore, 'o1', 'OrderPlaced', { lines: ['a'] });
  await append(eventStore, 'o2', 'OrderPlaced', { lines: ['b'] });
  await appendTo(eventStore, 'refund-r1', 'RefundOpened', { order: 'o1' });
  await appendTo(eventStore, 'refund-r1', 'RefundNoted');
  await runner(undefined, refunds).runOnce();
  t.deepEqual(calls, ['Reserve o1:a', 'Reserve o2:b', 'Release o1:a'], 'the note reached o1, whose lines it released');
  const log = await eventStore.readAll(null, 100);
  t.deepEqual(
    eventsOfInstance(refunds, log, 'o1').map((e) => e.type),
    ['OrderPlaced', 'RefundOpened', 'RefundNoted'],
  );
});

test('an effect (a step that looks something up first) runs through its handler in order with the commands: a refusal is dropped, a failure retried on the clock holding back what follows; a handler it names must be given', async (t) => {
  const { clock, eventStore, calls, lines, runner, readStore } = setUp();
  /** Placing an order prices it first (an effect, as a catalog lookup would), then reserves its lines. */
  const priced: Workflow<OrderState> = {
    ...orders,
    name: 'test-priced-orders',
    effects: ['price-order'],
    decide(event, state) {
      const decided = orders.decide(event, state);
      if (event.type !== 'OrderPlaced' || decided.length === 0) return decided;
      const order = event.streamId.slice(ORDER.length);
      const context = {
        organizationId: 'org-1',
        environment: 'test' as const,
        actor: 'system:test',
        causationId: order,
      };
      return [{ effect: 'price-order', input: { order }, context }, ...decided];
    },
  };
  t.throws(() => runner(undefined, priced), { message: /needs handlers for its effects price-order/ });

  const instance = (id: string) => readStore.collection<WorkflowInstanceDoc>(workflowInstances(priced.name)).get(id);
  const pricedOrders: string[] = [];
  let failing = true;
  const effects: Record<string, EffectHandler> = {
    async 'price-order'(input, context) {
      if (input.order === 'o-gone') throw new NotFoundError('catalog price', 'p-1');
      if (input.order === 'o-flaky' && failing) throw new Error('the catalog is down');
      pricedOrders.push(`${input.order} for ${context.organizationId}`);
    },
  };
  for (const order of ['o1', 'o-gone', 'o-flaky']) await append(eventStore, order, 'OrderPlaced', { lines: ['a'] });
  const running = runner(undefined, priced, effects);
  await running.runOnce();
  t.deepEqual(pricedOrders, ['o1 for org-1']);
  t.deepEqual(calls, ['Reserve o1:a', 'Reserve o-gone:a'], 'refused: dropped, its instance goes on; failed: held back');
  t.like(await instance('o-flaky'), { pending: true, failures: 1 });
  t.true(lines.some((line) => /effect price-order failed \(attempt 1\).*the catalog is down/.test(line)));

  failing = false;
  clock.advanceBy(1000);
  await running.runOnce();
  t.deepEqual(pricedOrders, ['o1 for org-1', 'o-flaky for org-1']);
  t.deepEqual(calls.at(-1), 'Reserve o-flaky:a', 'what it held back follows it');
  t.like(await instance('o-flaky'), { pending: false, failures: 0 });
  await running.stop();
});

test('the read models dropped under a running workflow (a shared store rebuilt by the projections’ owner): it folds the log again from the start, so what it knew is not lost', async (t) => {
  const { eventStore, readStore, calls, lines, runner, stockLog } = setUp();
  const running = runner();
  await append(eventStore, 'o1', 'OrderPlaced', { lines: ['a'] });
  await running.runOnce();
  t.deepEqual(calls, ['Reserve o1:a']);

  await readStore.dropAll();
  await append(eventStore, 'o1', 'OrderCanceled');
  await running.runOnce();
  t.true(calls.includes('Release o1:a'), 'the order’s lines, folded again, are released');
  t.deepEqual(await stockLog(), ['o1:a StockReleased', 'o1:a StockReserved']);
  t.true(lines.some((line) => /dropped with the read models: rebuilding/.test(line)));
  await running.stop();
});
