import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { launchChromium, screenshotFolder, screenshotsWithAxe } from './chromium.ts';

// Serial: each check runs after the test before it has ended (its teardowns run).
const name = `shots-${randomUUID().slice(0, 8)}`;
const left = async () => (await readdir(tmpdir())).filter((entry) => entry.startsWith(`weir-${name}-`));
let kept = '';

test.serial('a passing browser test takes its screenshots', async (t) => {
  const page = await (await launchChromium(t)).newPage();
  await page.setContent('<!doctype html><html lang="en"><title>Shot</title><main><h1>Shot</h1></main></html>');
  await screenshotsWithAxe(t, page, name);
  t.is((await left()).length, 1, 'in a folder while the test runs');
});

test.serial('and leaves no screenshot folder in the temp dir once it passed', async (t) => {
  t.deepEqual(await left(), []);
});

test.serial.failing('a failing test takes a screenshot', async (t) => {
  kept = await screenshotFolder(t, `weir-${name}-failing-`);
  await writeFile(join(kept, 'page.png'), '');
  t.fail('the page was wrong');
});

test.serial('and keeps it for a look', async (t) => {
  t.teardown(() => rm(kept, { recursive: true, force: true }));
  t.true(existsSync(join(kept, 'page.png')));
});
