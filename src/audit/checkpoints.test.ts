import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { createSqliteEventStore } from '../event-store/sqlite-event-store.ts';
import { createManualClock } from '../shared/clock.ts';
import { latestCheckpoint, scheduleCheckpoints } from './checkpoints.ts';
import { loadOperatorKey } from './operator-key.ts';

async function setUp(t: { teardown: (fn: () => Promise<void>) => void }) {
  const directory = await mkdtemp(join(tmpdir(), 'weir-checkpoints-'));
  const eventStore = createSqliteEventStore({ path: join(directory, 'events.sqlite3') });
  t.teardown(async () => {
    await eventStore.close();
    await rm(directory, { recursive: true, force: true });
  });
  const key = loadOperatorKey({ keyFile: join(directory, 'audit-operator.key') });
  const manual = createManualClock(Date.parse('2026-03-02T00:00:00.000Z'));
  // Which timers are armed, so a test sees that a stopped schedule leaves none.
  const armed = new Set<() => void>();
  const clock = {
    ...manual,
    schedule(at: number, fire: () => void) {
      const cancel = manual.schedule(at, () => {
        armed.delete(cancel);
        fire();
      });
      armed.add(cancel);
      return () => {
        armed.delete(cancel);
        cancel();
      };
    },
  };
  const append = (stream: string) =>
    eventStore.append(
      stream,
      [
        {
          id: randomUUID(),
          type: 'InvoiceCreated',
          data: {},
          metadata: {
            organizationId: 'org_a',
            environment: 'test',
            actor: 'system:test',
            correlationId: 'c',
            occurredAt: '2026-03-02T00:00:00.000Z',
          },
        },
      ],
      'no_stream',
    );
  return { eventStore, key, clock, armed, append };
}

test('a checkpoint is signed each interval when the log moved, and once more on stop, so a clean stop leaves no unsigned tail', async (t) => {
  const { eventStore, key, clock, armed, append } = await setUp(t);
  const written: string[] = [];
  const stop = scheduleCheckpoints({
    eventStore,
    key,
    clock,
    intervalMs: 60_000,
    log: (line) => t.fail(line),
    onWritten: (checkpoint) => written.push(checkpoint.position),
  });
  await append('invoice-1');
  const signedOnce = new Promise<void>((resolve) => {
    const poll = () => (written.length > 0 ? resolve() : setImmediate(poll));
    poll();
  });
  clock.advanceBy(60_000);
  await signedOnce;
  t.deepEqual(written, ['1']);

  // Appended after the last round, before the next: the stop signs it.
  const { position } = await append('invoice-2');
  await stop();
  t.is((await latestCheckpoint(eventStore))?.position, String(position));
  t.is(written.length, 2);
  t.is(armed.size, 0, 'stopped: no round is armed any more');
});
