import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { createSetupToken } from './setup-token.ts';

test('the setup token matches only itself, only until spent; a new one replaces the old', (t) => {
  const setup = createSetupToken();
  t.false(setup.active());
  t.false(setup.matches('anything'));
  const first = setup.issue();
  t.regex(first, /^[A-Za-z0-9_-]{32}$/);
  t.true(setup.matches(first));
  t.false(setup.matches(`${first}x`));
  t.false(setup.matches(undefined));
  const second = setup.issue();
  t.false(setup.matches(first));
  t.true(setup.matches(second));
  setup.spend();
  t.false(setup.active());
  t.false(setup.matches(second));
});

test('given a file, the token is kept there for its owner alone until spent, and a stale one goes', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'weir-setup-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'dashboard-setup-token');
  await writeFile(file, 'stale\n', { mode: 0o644 });
  const setup = createSetupToken(file);
  const token = setup.issue();
  t.is(await readFile(file, 'utf8'), `${token}\n`);
  t.is((await stat(file)).mode & 0o777, 0o600);
  setup.spend();
  await t.throwsAsync(stat(file), { code: 'ENOENT' });
});
