import test from 'ava';
import { createManualClock } from '../shared/clock.ts';
import { createChainReadGate } from './chain-read-gate.ts';
import { fakeFollowers, HOUR, SECOND, T0 } from './gated-timers.fixture.ts';

/** A gate over followers of sepolia and base (none read yet), a matcher answering `drained`, an hour's longest wait. */
function gateOverFollowers() {
  const clock = createManualClock(T0);
  const followers = fakeFollowers(['sepolia', 'base']);
  const matcher: { drained: boolean | Error; asked: number; about: string[][] } = {
    drained: true,
    asked: 0,
    about: [],
  };
  const lines: string[] = [];
  const gate = createChainReadGate({
    clock,
    readThrough: followers.readThrough,
    maxWaitMs: HOUR,
    log: (line) => lines.push(line),
    matcherDrained: async (networks) => {
      matcher.asked += 1;
      matcher.about.push([...networks]);
      if (matcher.drained instanceof Error) throw matcher.drained;
      return matcher.drained;
    },
  });
  return { clock, followers, matcher, lines, gate };
}

test('holds until every follower of the networks has read a head at or after the time; networks without a follower here hold nothing', async (t) => {
  const { followers, gate, lines } = gateOverFollowers();
  t.false(await gate.holds([], T0), 'no network');
  t.false(await gate.holds(['test', 'weir-testnet'], T0), 'no follower of these networks runs here');
  t.true(await gate.holds(['test', 'sepolia'], T0), 'sepolia has read nothing since it started');

  followers.read('sepolia', T0 - SECOND, 10n);
  t.true(await gate.holds(['sepolia'], T0), 'read only up to before the time');
  followers.read('sepolia', T0, 11n);
  t.false(await gate.holds(['sepolia', 'sepolia'], T0), 'read a head at the time');
  t.true(await gate.holds(['sepolia', 'base'], T0), 'base has not read yet');
  followers.read('base', T0 + SECOND, 7n);
  t.false(await gate.holds(['sepolia', 'base'], T0));
  t.deepEqual(lines, [], 'waiting is not logged');
});

test('holds while the matcher has not handled what the followers published; asks it once per set of follower readings', async (t) => {
  const { followers, matcher, gate } = gateOverFollowers();
  followers.read('sepolia', T0 + SECOND, 10n);
  followers.read('base', T0 + SECOND, 7n);
  matcher.drained = false;
  t.true(await gate.holds(['sepolia'], T0));
  t.is(matcher.asked, 1);

  matcher.drained = true;
  t.false(await gate.holds(['sepolia'], T0));
  t.false(await gate.holds(['sepolia'], T0 - HOUR));
  t.is(matcher.asked, 2, 'the same sepolia reading: the matcher is not asked again');
  t.false(await gate.holds(['sepolia', 'base'], T0));
  t.false(await gate.holds(['base'], T0));
  t.is(matcher.asked, 3, 'a network not asked about with its reading yet: asked once');
  t.deepEqual(
    matcher.about,
    [['sepolia'], ['sepolia'], ['base']],
    'about the networks whose readings are not confirmed yet, only',
  );

  followers.read('sepolia', T0 + 2 * SECOND, 11n);
  matcher.drained = false;
  t.true(await gate.holds(['sepolia'], T0), 'a new reading may come with transfers the matcher has not handled');
  t.is(matcher.asked, 4);
});

test('holds, without failing, while the bus of the matcher cannot say whether it is drained; the cap still lets go', async (t) => {
  const { clock, followers, matcher, gate, lines } = gateOverFollowers();
  followers.read('sepolia', T0 + SECOND, 10n);
  matcher.drained = new Error('JetStream consumer info: connection closed');
  t.true(await gate.holds(['sepolia'], T0));
  t.true(await gate.holds(['sepolia'], T0), 'asked again: still no answer');
  t.is(matcher.asked, 2);
  t.deepEqual(lines, [], 'the bus logs its own outage once');

  matcher.drained = true;
  t.false(await gate.holds(['sepolia'], T0), 'the bus answers again');

  followers.read('sepolia', T0 + 2 * SECOND, 11n);
  matcher.drained = new Error('JetStream consumer info: connection closed');
  clock.set(T0 + HOUR + 1);
  t.false(await gate.holds(['sepolia'], T0), 'past the longest wait the matcher is not asked');
  t.is(matcher.asked, 3);
});

test('lets go once the clock is past the time plus the longest wait, logging one line per network and outage', async (t) => {
  const { clock, followers, matcher, gate, lines } = gateOverFollowers();
  followers.read('sepolia', T0 - 5 * 60 * SECOND, 4242n);
  matcher.drained = false;

  clock.set(T0 + HOUR);
  t.true(await gate.holds(['sepolia', 'base'], T0), 'not past the longest wait yet');
  t.deepEqual(lines, []);

  clock.set(T0 + HOUR + 1);
  for (let i = 0; i < 5; i++) {
    t.false(await gate.holds(['sepolia', 'base', 'test'], T0 - i * SECOND));
    t.false(await gate.holds(['base'], T0));
  }
  t.is(matcher.asked, 0, 'not waiting for the matcher either');
  t.is(lines.length, 2, lines.join('\n'));
  t.regex(lines[0]!, /^\[timers\] sepolia: .*09:55:00\.000Z.*4242.*3600 s/);
  t.regex(lines[1]!, /^\[timers\] base: .*has read no new head since it started.*no block processed/);
  t.true(await gate.holds(['base'], clock.now()), 'something due later still waits');

  // sepolia reads on, then falls behind again: a new outage, logged again; base is still the same one.
  followers.read('sepolia', T0 + HOUR, 4300n);
  clock.set(T0 + 3 * HOUR);
  t.false(await gate.holds(['sepolia', 'base'], T0 + HOUR + SECOND));
  t.is(lines.length, 3, lines.join('\n'));
  t.regex(lines[2]!, /^\[timers\] sepolia: .*4300/);
});
