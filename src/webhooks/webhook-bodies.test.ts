import test from 'ava';
import { createWebhookBodies } from './webhook-bodies.ts';

test('deliveries of one event due at once share a single render', async (t) => {
  let renders = 0;
  let finish = (_body: string) => {};
  const render = () =>
    new Promise<string>((resolve) => {
      renders++;
      finish = resolve;
    });
  const bodies = createWebhookBodies();
  const five = Array.from({ length: 5 }, () => bodies.bodyOf('evt_1', render));
  finish('{"id":"evt_1"}');
  t.deepEqual(await Promise.all(five), Array(5).fill('{"id":"evt_1"}'));
  t.is(await bodies.bodyOf('evt_1', render), '{"id":"evt_1"}');
  t.is(renders, 1);
});

test('a failed render is not kept: the next try renders again', async (t) => {
  let calls = 0;
  const render = async () => {
    calls++;
    if (calls === 1) throw new Error('log unavailable');
    return 'body';
  };
  const bodies = createWebhookBodies();
  await t.throwsAsync(bodies.bodyOf('evt_1', render), { message: 'log unavailable' });
  t.is(await bodies.bodyOf('evt_1', render), 'body');
  t.is(calls, 2);
});

test('only the newest bodies are kept', async (t) => {
  const renders: string[] = [];
  const bodies = createWebhookBodies(2);
  for (const id of ['a', 'b', 'c', 'c', 'b', 'a'])
    await bodies.bodyOf(id, async () => {
      renders.push(id);
      return id;
    });
  t.deepEqual(renders, ['a', 'b', 'c', 'a']);
});
