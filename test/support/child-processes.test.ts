import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import test from 'ava';
import { processesNaming, stopProcesses } from './child-processes.ts';
import { killWithWhatItStarted, stopCleanly } from './weir-process.ts';

/**
 * A parent that starts a `sleep` in a process group of its own, as Weir starts anvil; on SIGTERM
 * it exits at once and leaves it running, as a Weir whose shutdown forgot its chain would.
 */
async function parentWithDetachedChild(marker: string) {
  const script = `
    const { spawn } = require('node:child_process');
    spawn('sleep', ['300'], { detached: true, stdio: 'ignore', argv0: process.env.MARKER });
    process.on('SIGTERM', () => process.exit(0));
    console.log('started');
    setInterval(() => {}, 1000);
  `;
  // Named in its environment, not its command line: only the child is to name it there.
  const parent = spawn(process.execPath, ['-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, MARKER: marker },
  });
  await new Promise<void>((resolve) => parent.stdout.once('data', () => resolve()));
  return parent;
}

test('killWithWhatItStarted stops what a process started in a group of its own, which a SIGKILL of it alone leaves running', async (t) => {
  const marker = `weir-test-sleep-${randomUUID()}`;
  t.teardown(() => stopProcesses(processesNaming(marker)));
  const parent = await parentWithDetachedChild(marker);
  t.is(processesNaming(marker).length, 1, 'the child runs');
  await killWithWhatItStarted(parent);
  t.deepEqual(processesNaming(marker), []);
});

test('stopCleanly names what a process stopped by SIGTERM left running, and stops it', async (t) => {
  const marker = `weir-test-sleep-${randomUUID()}`;
  t.teardown(() => stopProcesses(processesNaming(marker)));
  const parent = await parentWithDetachedChild(marker);
  const error = await t.throwsAsync(stopCleanly(parent));
  t.regex(error?.message ?? '', new RegExp(`stopped by SIGTERM but left running[^]*${marker}`));
  t.deepEqual(processesNaming(marker), []);
});
