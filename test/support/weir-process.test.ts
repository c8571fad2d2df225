import test from 'ava';
import { childWeirSlots } from './child-weir-slots.ts';
import { runWeir } from './weir-process.ts';

test('runWeir leaves the worker free while the command runs (it blocked every other test of the file), in one of its child slots, and ends with its status and output', async (t) => {
  const run = runWeir(['--help']);
  const first = await Promise.race([
    new Promise((resolve) => setImmediate(() => resolve('the event loop turned'))),
    Promise.resolve(run).then(() => 'the command ended'),
  ]);
  t.is(first, 'the event loop turned');
  t.is(childWeirSlots.held(), 1);
  const result = await run;
  t.is(childWeirSlots.held(), 0, 'given back at the end');
  t.is(result.status, 0, result.stderr);
  t.regex(result.stdout, /^Usage: weir <command> \[options\]/);
});
