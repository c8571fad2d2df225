import test from 'ava';
import { createShutdownStack } from './shutdown-stack.ts';

test('what opened last closes first; a close that fails is reported and the ones before it still close', async (t) => {
  const closed: string[] = [];
  const reported: unknown[] = [];
  const opened = createShutdownStack((error) => reported.push(error));
  opened.add(() => closed.push('store'));
  opened.add(async () => {
    closed.push('bus');
    throw new Error('bus gone');
  });
  opened.add(async () => closed.push('server'));
  await opened.close();
  t.deepEqual(closed, ['server', 'bus', 'store']);
  t.deepEqual(
    reported.map((e) => (e as Error).message),
    ['bus gone'],
  );
  await opened.close();
  t.is(closed.length, 3, 'each closes once');
});
