import test from 'ava';
import { userAggregate, USER_ENVIRONMENT } from '../../actors/user.ts';
import { createDashboardSessions } from './sessions.ts';
import { authWorld } from './test-world.ts';

const limits = { idleMs: 30 * 60_000, absoluteMs: 12 * 3600_000, recordActivityEveryMs: 5 * 60_000 };

test('a session is found by its token while in use, and the log holds only its hash', async (t) => {
  const world = await authWorld(t);
  const pat = await world.user('pat@example.com');
  const sessions = createDashboardSessions({ ...world, limits });
  const { token, session } = await sessions.start(pat, '10.0.0.1');
  t.regex(token, /^[0-9a-f-]{36}\.[A-Za-z0-9_-]{43}$/);
  t.like(session, { userId: pat.id, organizationId: world.organizationId, clientAddress: '10.0.0.1', endedAt: null });
  const log = JSON.stringify((await world.eventStore.readAll(null, 1000)).map((e) => e.data));
  t.false(log.includes(token.split('.')[1]!), 'the secret is not in the log');
  t.like(await sessions.resolve(token), { user: { email: 'pat@example.com' }, session: { id: session.id } });
  t.is(await sessions.resolve(`${session.id}.${'A'.repeat(43)}`), null, 'the right id with a wrong secret');
  t.is(await sessions.resolve('garbage'), null);
  t.is(await sessions.resolve(undefined), null);
});

test('a session ends after 30 idle minutes, kept alive by use, and after 12 hours however used', async (t) => {
  const world = await authWorld(t);
  const pat = await world.user('pat@example.com');
  const sessions = createDashboardSessions({ ...world, limits });
  const { token } = await sessions.start(pat, '10.0.0.1');
  // Used every 29 minutes: alive, its activity recorded in the log as it goes.
  for (let i = 0; i < 24; i++) {
    world.clock.advanceBy(29 * 60_000);
    t.truthy(await sessions.resolve(token), `use ${i}`);
  }
  world.clock.advanceBy(40 * 60_000);
  t.is(await sessions.resolve(token), null, 'past 12 hours');
  const ended = (await world.eventStore.readAll(null, 1000)).filter((e) => e.type === 'DashboardSessionEnded');
  t.like(ended[0]?.data, { reason: 'expired' });

  const second = await sessions.start(pat, '10.0.0.1');
  world.clock.advanceBy(30 * 60_000);
  t.is(await sessions.resolve(second.token), null, '30 minutes idle');
  world.clock.advanceBy(1);
  t.is(await sessions.resolve(second.token), null, 'and it stays ended');
});

test('a restart (a new session manager on the same log) keeps a session used within the idle time', async (t) => {
  const world = await authWorld(t);
  const pat = await world.user('pat@example.com');
  const before = createDashboardSessions({ ...world, limits });
  const { token } = await before.start(pat, '10.0.0.1');
  world.clock.advanceBy(20 * 60_000);
  t.truthy(await before.resolve(token), 'used at minute 20: recorded, being 5 minutes past the last record');
  world.clock.advanceBy(25 * 60_000);
  const after = createDashboardSessions({ ...world, limits });
  t.truthy(await after.resolve(token), 'minute 45: 25 minutes after the recorded use');
});

test('signing out ends the session; a removed user’s sessions end', async (t) => {
  const world = await authWorld(t);
  const pat = await world.user('pat@example.com');
  const sessions = createDashboardSessions({ ...world, limits });
  const first = await sessions.start(pat, '10.0.0.1');
  await sessions.end(first.session, 'signed_out');
  t.is(await sessions.resolve(first.token), null);
  const second = await sessions.start(pat, '10.0.0.1');
  await world.commands.handle(
    userAggregate,
    pat.id,
    { type: 'RemoveUser' },
    { organizationId: world.organizationId, environment: USER_ENVIRONMENT, actor: 'cli' },
  );
  await world.settled();
  t.is(await sessions.resolve(second.token), null);
});
