import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { bridgeCredential, bridgeInvitation, INSPECTOR_TOKEN_FILE } from './inspector.ts';

const PAGE = 'http://localhost:8090';

/** Where a data dir's inspector token goes, in a folder removed after the test. */
async function tokenFile(t: ExecutionContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'weir-inspector-token-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return join(dir, INSPECTOR_TOKEN_FILE);
}

test('without an admin token the bridge asks for the one in the data dir: made there (0600) at the first start, the same after a restart, shown at a terminal only', async (t) => {
  const file = await tokenFile(t);
  const made = bridgeCredential(file);
  t.like(made, { file });
  t.regex(made.token, /^[\w-]{32}$/);
  t.is((await readFile(file, 'utf8')).trim(), made.token, 'where an operator with no terminal reads it');
  t.is((await stat(file)).mode & 0o777, 0o600);
  t.is(bridgeCredential(file).token, made.token, 'a bookmarked page connects after a restart');
  t.is(bridgeInvitation(PAGE, made, true), `${PAGE}/#token=${made.token}`);
  const logged = bridgeInvitation(PAGE, made, false);
  t.false(logged.includes(made.token), 'never in a log line');
  t.is(logged, `${PAGE}/#token=<the token in ${file}>`, 'the log line says where it is');
});

test('a token file an operator wrote is taken as it is; an empty one is filled', async (t) => {
  const file = await tokenFile(t);
  await writeFile(file, 'chosen-by-the-operator\n');
  t.is(bridgeCredential(file).token, 'chosen-by-the-operator');
  await writeFile(file, '\n');
  const made = bridgeCredential(file).token;
  t.regex(made, /^[\w-]{32}$/);
  t.is((await readFile(file, 'utf8')).trim(), made);
});

/**
 * The token `bridgeCredential` holds when another process (`weir serve` beside `weir inspect`) makes
 * the file's token just after this one first read it; and the other's.
 */
function racing(file: string): { mine: string; other: string } {
  let other: string | undefined;
  const mine = bridgeCredential(file, (path) => {
    // Thrown or returned, this first read is what this process saw before the other wrote.
    try {
      return readFileSync(path, 'utf8');
    } finally {
      other ??= bridgeCredential(file).token;
    }
  }).token;
  return { mine, other: other ?? 'the other never ran' };
}

test('two processes making the token file at once (serve and inspect share the data dir unlocked) end with one token, the one in the file', async (t) => {
  const missing = await tokenFile(t);
  const first = racing(missing);
  t.is(first.mine, first.other);
  t.is((await readFile(missing, 'utf8')).trim(), first.mine);
  t.is((await stat(missing)).mode & 0o777, 0o600);

  const empty = await tokenFile(t);
  await writeFile(empty, '');
  const filled = racing(empty);
  t.regex(filled.mine, /^[\w-]{32}$/);
  t.is(filled.mine, filled.other, 'the token the other linked in is taken, not written over');
  t.is((await readFile(empty, 'utf8')).trim(), filled.mine);
  t.deepEqual(await readdir(dirname(empty)), [INSPECTOR_TOKEN_FILE], 'no draft left behind');
});

test('an admin token is never the bridge token: it would sit in a page address (history, bookmarks) and it creates organizations', async (t) => {
  const file = await tokenFile(t);
  const credential = bridgeCredential(file);
  t.regex(credential.token, /^[\w-]{32}$/);
  t.is((await readFile(file, 'utf8')).trim(), credential.token);
  t.is(bridgeInvitation(PAGE, credential, true), `${PAGE}/#token=${credential.token}`);
});
