import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
  const made = bridgeCredential(undefined, undefined, file);
  t.like(made, { shown: true, file });
  t.regex(made.token, /^[\w-]{32}$/);
  t.is((await readFile(file, 'utf8')).trim(), made.token, 'where an operator with no terminal reads it');
  t.is((await stat(file)).mode & 0o777, 0o600);
  t.is(bridgeCredential(undefined, undefined, file).token, made.token, 'a bookmarked page connects after a restart');
  t.is(bridgeInvitation(PAGE, made, true), `${PAGE}/#token=${made.token}`);
  const logged = bridgeInvitation(PAGE, made, false);
  t.false(logged.includes(made.token), 'never in a log line');
  t.is(logged, `${PAGE}/#token=<the token in ${file}>`, 'the log line says where it is');
});

test('a token file an operator wrote is taken as it is; an empty one is filled', async (t) => {
  const file = await tokenFile(t);
  await writeFile(file, 'chosen-by-the-operator\n');
  t.is(bridgeCredential(undefined, undefined, file).token, 'chosen-by-the-operator');
  await writeFile(file, '\n');
  const made = bridgeCredential(undefined, undefined, file).token;
  t.regex(made, /^[\w-]{32}$/);
  t.is((await readFile(file, 'utf8')).trim(), made);
});

test('an admin token from the command line or a file is the bridge token and shown at a terminal; one from the environment never; no token file is made', async (t) => {
  const file = await tokenFile(t);
  for (const from of ['argument', 'file'] as const) {
    const credential = bridgeCredential('op token&', from, file);
    t.like(credential, { token: 'op token&', shown: true, file: null });
    t.is(bridgeInvitation(PAGE, credential, true), `${PAGE}/#token=op%20token%26`);
    t.is(bridgeInvitation(PAGE, credential, false), `${PAGE}/#token=<the admin token>`);
  }
  const fromEnvironment = bridgeCredential('op-token', 'environment', file);
  t.like(fromEnvironment, { token: 'op-token', shown: false });
  t.is(bridgeInvitation(PAGE, fromEnvironment, true), `${PAGE}/#token=<the admin token>`);
  await t.throwsAsync(stat(file), { code: 'ENOENT' });
});
