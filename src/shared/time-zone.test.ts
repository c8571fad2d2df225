import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import test from 'ava';
import {
  formatPerZone,
  isTimeZone,
  periodKeyStart,
  pipelineZone,
  UTC,
  zonedDate,
  zonedMidnight,
  zonedPeriodStart,
} from './time-zone.ts';

const iso = (time: number) => new Date(time).toISOString();

test('a zone’s midnight moves with daylight saving: New York’s 8 March 2026 starts at 05:00 UTC and lasts 23 hours, its 1 November 25', (t) => {
  t.is(iso(zonedMidnight(2026, 3, 8, 'America/New_York')), '2026-03-08T05:00:00.000Z');
  t.is(iso(zonedMidnight(2026, 3, 9, 'America/New_York')), '2026-03-09T04:00:00.000Z');
  t.is(iso(zonedMidnight(2026, 11, 1, 'America/New_York')), '2026-11-01T04:00:00.000Z');
  t.is(iso(zonedMidnight(2026, 11, 2, 'America/New_York')), '2026-11-02T05:00:00.000Z');
  t.is(iso(zonedMidnight(2026, 3, 29, 'Europe/Paris')), '2026-03-28T23:00:00.000Z');
  t.is(iso(zonedMidnight(2026, 3, 30, 'Europe/Paris')), '2026-03-29T22:00:00.000Z');
  // Half-hour offsets, and a day number past the month's end rolls over as Date.UTC does.
  t.is(iso(zonedMidnight(2026, 1, 1, 'Asia/Kolkata')), '2025-12-31T18:30:00.000Z');
  t.is(iso(zonedMidnight(2026, 2, 29, 'UTC')), '2026-03-01T00:00:00.000Z');
});

test('where daylight saving skips midnight, the day starts at the change (its first instant), not an hour before it in the day before', (t) => {
  // Santiago's clocks go from 00:00 (-04) to 01:00 (-03) on 6 September 2026: the day starts at 04:00Z.
  t.is(iso(zonedMidnight(2026, 9, 6, 'America/Santiago')), '2026-09-06T04:00:00.000Z');
  t.is(zonedDate(zonedMidnight(2026, 9, 6, 'America/Santiago'), 'America/Santiago'), '2026-09-06');
  t.is(zonedDate(zonedMidnight(2026, 9, 6, 'America/Santiago') - 1, 'America/Santiago'), '2026-09-05');
  t.is(iso(zonedMidnight(2026, 9, 7, 'America/Santiago')), '2026-09-07T03:00:00.000Z');
  t.is(iso(zonedMidnight(2026, 3, 8, 'America/Havana')), '2026-03-08T05:00:00.000Z');
  t.is(iso(zonedMidnight(2026, 3, 29, 'Atlantic/Azores')), '2026-03-29T01:00:00.000Z');
  // Havana's midnight of 1 November comes twice (01:00 CDT back to 00:00 CST): the day starts at the first.
  t.is(iso(zonedMidnight(2026, 11, 1, 'America/Havana')), '2026-11-01T04:00:00.000Z');
  const lateOnTheDay = Date.parse('2026-09-06T20:00:00Z');
  t.is(iso(zonedPeriodStart(lateOnTheDay, 'day', 'America/Santiago')), '2026-09-06T04:00:00.000Z');
  t.is(iso(zonedPeriodStart(lateOnTheDay, 'month', 'America/Santiago')), '2026-09-01T04:00:00.000Z');
  t.is(iso(periodKeyStart('2026-09-06', 'America/Santiago')), '2026-09-06T04:00:00.000Z');
  t.is(iso(periodKeyStart('2026-03-08', 'America/Havana')), '2026-03-08T05:00:00.000Z');
});

test('years 0 to 99 are themselves, not 1900 to 1999 as Date.UTC reads them; year 0 is 1 BC to Intl', (t) => {
  // New York kept its local mean time (-4:56:02) until 1883.
  t.is(iso(zonedMidnight(50, 1, 1, 'America/New_York')), '0050-01-01T04:56:02.000Z');
  t.is(iso(zonedMidnight(0, 3, 1, 'America/New_York')), '0000-03-01T04:56:02.000Z');
  t.is(zonedDate(Date.parse('0000-06-01T12:00:00Z'), 'Europe/Paris'), '0000-06-01');
  // Friday 3 June 50 is in the week from Monday 30 May.
  t.is(iso(zonedPeriodStart(Date.parse('0050-06-03T12:00:00Z'), 'week', 'UTC')), '0050-05-30T00:00:00.000Z');
});

test('the period holding an instant starts at the zone’s midnight: its day, its week from Monday, its month', (t) => {
  // 02:30 UTC on Monday 9 March is still Sunday 8 March in New York (22:30 EDT).
  const at = Date.parse('2026-03-09T02:30:00Z');
  t.is(iso(zonedPeriodStart(at, 'day', 'America/New_York')), '2026-03-08T05:00:00.000Z');
  t.is(iso(zonedPeriodStart(at, 'week', 'America/New_York')), '2026-03-02T05:00:00.000Z');
  t.is(iso(zonedPeriodStart(at, 'month', 'America/New_York')), '2026-03-01T05:00:00.000Z');
  t.is(iso(zonedPeriodStart(at, 'week', 'UTC')), '2026-03-09T00:00:00.000Z');
  // 23:30 UTC on 31 March is 1 April in Paris.
  t.is(iso(zonedPeriodStart(Date.parse('2026-03-31T23:30:00Z'), 'month', 'Europe/Paris')), '2026-03-31T22:00:00.000Z');
});

test('only IANA zone names (and UTC) are time zones: not offsets, abbreviations or made-up places', (t) => {
  for (const zone of ['UTC', 'Europe/Paris', 'America/New_York', 'Asia/Kolkata', 'America/Argentina/Buenos_Aires'])
    t.true(isTimeZone(zone), zone);
  for (const zone of ['', '+01:00', 'EST', 'Mars/Olympus_Mons', 'Europe/Paris\n', '../etc/passwd', 'utc/x'])
    t.false(isTimeZone(zone), JSON.stringify(zone));
});

test('a period named in a zone (a day, an ISO week from Monday, a month) starts at that zone’s midnight, weeks across a year’s end included', (t) => {
  t.is(iso(periodKeyStart('2026-03-08', 'America/New_York')), '2026-03-08T05:00:00.000Z');
  t.is(iso(periodKeyStart('2026-11', 'America/New_York')), '2026-11-01T04:00:00.000Z');
  t.is(iso(periodKeyStart('2026-W10', 'America/New_York')), '2026-03-02T05:00:00.000Z');
  // 2026's week 53 starts on Monday 28 December; 2027's week 1 on Monday 4 January; 2026's week 1 on 29 December 2025.
  t.is(iso(periodKeyStart('2026-W53', 'Europe/Paris')), '2026-12-27T23:00:00.000Z');
  t.is(iso(periodKeyStart('2027-W01', 'Europe/Paris')), '2027-01-03T23:00:00.000Z');
  t.is(iso(periodKeyStart('2026-W01', 'UTC')), '2025-12-29T00:00:00.000Z');
  t.true(Number.isNaN(periodKeyStart('2026-03-08T00:00:00.000Z', 'UTC')));
});

test('zonedDate: the calendar date in the zone at an instant, either side of its midnight', (t) => {
  t.is(zonedDate(Date.parse('2026-11-30T20:00:00Z'), 'Asia/Tokyo'), '2026-12-01');
  t.is(zonedDate(Date.parse('2026-12-01T04:00:00Z'), 'America/New_York'), '2026-11-30');
  t.is(zonedDate(Date.parse('2026-12-01T04:00:00Z'), UTC), '2026-12-01');
});

test('a formatter per zone is kept under its canonical name only: the same zone spelt in another case makes no new entry', (t) => {
  const made: string[] = [];
  const formatOf = formatPerZone((zone) => {
    made.push(zone);
    return new Intl.DateTimeFormat('en-US', { timeZone: zone });
  });
  const paris = formatOf('Europe/Paris');
  t.is(formatOf('Europe/Paris'), paris, 'kept');
  for (const spelt of ['eUROPE/pARIS', 'EUROPE/PARIS', 'europe/paris']) {
    t.is(formatOf(spelt).resolvedOptions().timeZone, 'Europe/Paris', `${spelt} is Paris`);
    t.is(formatOf(spelt).resolvedOptions().timeZone, 'Europe/Paris');
  }
  t.deepEqual(
    made,
    ['Europe/Paris', 'eUROPE/pARIS', 'eUROPE/pARIS', 'EUROPE/PARIS', 'EUROPE/PARIS', 'europe/paris', 'europe/paris'],
    'other spellings are made each time, never kept',
  );
  t.is(formatOf('Europe/Paris'), paris, 'the kept one is still the first');
});

/** Offsets (seconds) of zones MongoDB names at instants either side of their changes, in the zone this process runs in. */
const OFFSETS_SCRIPT = `
  import { pipelineZone } from './src/shared/time-zone.ts';
  const at = ['2026-03-08T06:59:59Z', '2026-03-08T07:00:00Z', '2026-11-01T05:59:59Z', '2026-11-01T06:00:00Z',
    '2026-04-04T14:59:59Z', '2026-04-04T15:00:00Z', '1850-01-01T00:00:00Z', '0050-06-01T00:00:00Z'].map(Date.parse);
  const zones = ['America/New_York', 'Australia/Lord_Howe', 'America/Argentina/Buenos_Aires', 'GMT', 'UTC', '-03:30'];
  console.log(JSON.stringify(zones.map((zone) => at.map((instant) => pipelineZone(zone).offsetSeconds(instant)))));
`;

test('a zone as a pipeline names it: its offset at each instant is the zone’s own across its changes, the same whatever zone the server runs in', async (t) => {
  const run = promisify(execFile);
  const under = async (TZ: string) =>
    JSON.parse(
      (
        await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', OFFSETS_SCRIPT], {
          env: { ...process.env, TZ },
        })
      ).stdout,
    ) as number[][];
  const expected = [
    // New York: EST, then EDT from 07:00Z on 8 March; EDT, then EST from 06:00Z on 1 November; its local mean time in 1850 and 50.
    [-18000, -14400, -14400, -18000, -14400, -14400, -17762, -17762],
    // Lord Howe: +11 until 02:00 local on 5 April (15:00Z on the 4th), then +10:30.
    [39600, 39600, 39600, 39600, 39600, 37800, 38180, 38180],
    // Buenos Aires (a three-part name): -03 all 2026; its local mean time (-3:53:48) in 1850 and 50.
    [-10800, -10800, -10800, -10800, -10800, -10800, -14028, -14028],
    [0, 0, 0, 0, 0, 0, 0, 0],
    [0, 0, 0, 0, 0, 0, 0, 0],
    [-12600, -12600, -12600, -12600, -12600, -12600, -12600, -12600],
  ];
  for (const TZ of ['America/New_York', 'Australia/Lord_Howe', 'Asia/Kolkata', 'UTC'])
    t.deepEqual(await under(TZ), expected, TZ);
});

test('a pipeline’s zone is a tz database name spelt in its case (UTC, GMT and three parts included) or an offset ±hh, ±hhmm, ±hh:mm; anything else is unknown, as to MongoDB', (t) => {
  for (const zone of [
    'UTC',
    'GMT',
    'Etc/UTC',
    'Etc/GMT+5',
    'America/Argentina/Buenos_Aires',
    'America/Port-au-Prince',
    'US/Eastern',
  ])
    t.truthy(pipelineZone(zone), zone);
  t.deepEqual(
    ['+05', '+0530', '-03:30', '+00:00'].map((zone) => [pipelineZone(zone)?.offsetSeconds(0), pipelineZone(zone)?.utc]),
    [
      [18000, false],
      [19800, false],
      [-12600, false],
      [0, true],
    ],
  );
  // Only UTC itself and a zero offset are MongoDB's UTC (an ISO string ending in Z); GMT is a zone of its own.
  t.true(pipelineZone('UTC')?.utc);
  t.false(pipelineZone('GMT')?.utc);
  for (const zone of [
    'utc',
    'europe/paris',
    'Europe/paris',
    'Mars/Olympus_Mons',
    '+5',
    '+05:3',
    '05:00',
    '',
    'Europe/Paris\n',
  ])
    t.is(pipelineZone(zone), null, JSON.stringify(zone));
});
