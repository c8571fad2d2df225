import test from 'ava';
import { bridgeCredential, bridgeInvitation } from './inspector.ts';

const PAGE = 'http://localhost:8090';

test('without an admin token the bridge asks for one made for this run, a new one each time, shown at a terminal only', (t) => {
  const made = bridgeCredential(undefined, undefined);
  t.like(made, { generated: true, shown: true });
  t.regex(made.token, /^[\w-]{32}$/);
  t.not(bridgeCredential(undefined, undefined).token, made.token);
  t.is(bridgeInvitation(PAGE, made, true), `${PAGE}/#token=${made.token}`);
  t.false(bridgeInvitation(PAGE, made, false).includes(made.token), 'never in a log line');
});

test('an admin token from the command line or a file is the bridge token and shown at a terminal; one from the environment never', (t) => {
  for (const from of ['argument', 'file'] as const) {
    const credential = bridgeCredential('op token&', from);
    t.like(credential, { token: 'op token&', generated: false, shown: true });
    t.is(bridgeInvitation(PAGE, credential, true), `${PAGE}/#token=op%20token%26`);
    t.is(bridgeInvitation(PAGE, credential, false), `${PAGE}/#token=<the admin token>`);
  }
  const fromEnvironment = bridgeCredential('op-token', 'environment');
  t.like(fromEnvironment, { token: 'op-token', shown: false });
  t.is(bridgeInvitation(PAGE, fromEnvironment, true), `${PAGE}/#token=<the admin token>`);
});
