import test from 'ava';
import { runBlock } from './readme.ts';

test('runBlock leaves the worker free while the block runs (a server started beside it has its output read), and ends with its output', async (t) => {
  const run = runBlock('echo localhost:8080 "$WEIR_DATA_DIR" KEY', {
    port: 9,
    dataDir: '/nowhere/data',
    fill: { KEY: 'filled' },
  });
  const first = await Promise.race([
    new Promise((resolve) => setImmediate(() => resolve('the event loop turned'))),
    Promise.resolve(run).then(() => 'the block ended'),
  ]);
  t.is(first, 'the event loop turned');
  t.is(await run, '127.0.0.1:9 /nowhere/data filled\n');
});

test('runBlock fails a block that fails, with its status, script and output', async (t) => {
  const error = await t.throwsAsync(runBlock('echo out\necho err >&2\nfalse\necho never', { dataDir: '/nowhere' }));
  t.is(error.message, 'README block failed (1):\necho out\necho err >&2\nfalse\necho never\nout\n\nerr\n');
});

test('runBlock stops a block past its timeout, the command running in it too (it would hold the pipes open)', async (t) => {
  // Far below the sleep: a block left running would end this test by ava's timeout instead.
  t.timeout(15_000);
  const error = await t.throwsAsync(
    runBlock('echo started\nsleep 60\necho never', { dataDir: '/nowhere', timeout: 500 }),
  );
  t.is(error.message, 'README block failed (null):\necho started\nsleep 60\necho never\nstarted\n\n');
});
