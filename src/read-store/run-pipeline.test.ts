import test from 'ava';
import { Aggregator, ProcessingMode, Query } from 'mingo';
import type { ReadDocument } from './read-store.ts';
import { PipelineTimeoutError, runPipeline } from './run-pipeline.ts';

const docs: ReadDocument[] = [
  { _id: 'a', status: 'complete', amount: 5, tags: ['x', 'y'] },
  { _id: 'b', status: 'open', amount: 7, tags: ['y'] },
  { _id: 'c', status: 'complete', amount: 11, tags: [] },
];
const source = {
  matching: (filter: Record<string, unknown>) => docs.filter((d) => d.status === filter.status),
  all: () => docs,
  resolveCollection: () => [],
  matchingIn: () => [],
};

/** A clock that moves one millisecond each time it is read: the pipeline's own work advances it. */
const ticking = () => {
  let at = 0;
  return () => at++;
};

test('with a time limit, a pipeline answers what it answers without one', (t) => {
  const pipeline = [
    { $match: { status: 'complete' } },
    { $project: { amount: 1, doubled: { $map: { input: '$tags', in: { $concat: ['$$this', '$$this'] } } } } },
    { $group: { _id: null, total: { $sum: '$amount' }, tags: { $push: '$doubled' } } },
  ];
  const free = runPipeline(source, pipeline);
  t.deepEqual(free, [{ _id: null, total: 16, tags: [['xx', 'yy'], []] }]);
  t.deepEqual(runPipeline(source, pipeline, { maxTimeMs: 1_000_000, now: ticking() }), free);
});

test('a pipeline past its time limit is stopped inside a document, not after it', (t) => {
  // 100^4 evaluations for one document: it would run for minutes on the server's one thread.
  const nested = (levels: number): unknown =>
    levels === 0
      ? 1
      : { $map: { input: { $literal: Array.from({ length: 100 }, (_, i) => i) }, in: nested(levels - 1) } };
  const error = t.throws(
    () => runPipeline(source, [{ $project: { x: nested(4) } }], { maxTimeMs: 500, now: ticking() }),
    {
      instanceOf: PipelineTimeoutError,
    },
  );
  t.is(error?.maxTimeMs, 500);
  t.regex(error?.message ?? '', /past 500 ms/);
});

test('an accumulator over many documents is stopped too', (t) => {
  const many = Array.from({ length: 5000 }, (_, i) => ({ _id: `d${i}`, amount: i }));
  const big = { ...source, all: () => many };
  t.throws(
    () =>
      runPipeline(big, [{ $group: { _id: null, all: { $push: { $add: ['$amount', 1] } } } }], {
        maxTimeMs: 100,
        now: ticking(),
      }),
    { instanceOf: PipelineTimeoutError },
  );
});

test('$lookup by local and foreign field joins what mingo joins over the whole collection, asking only for the values it meets', (t) => {
  const values = ['a', 'b', 1, 2, true, null, undefined, ['a', 2], [null], []];
  const pick = (i: number) => values[(i * 7 + 3) % values.length];
  const foreign: ReadDocument[] = Array.from({ length: 40 }, (_, i) => {
    const doc: ReadDocument = { _id: `f${i}`, n: i };
    if (pick(i) !== undefined) doc['key'] = pick(i);
    return doc;
  });
  const local: ReadDocument[] = Array.from({ length: 30 }, (_, i) => {
    const doc: ReadDocument = { _id: `l${i}`, ref: i % 4 === 0 ? `f${i}` : i % 4 === 1 ? [`f${i}`, 'f0'] : null };
    if (pick(i + 5) !== undefined) doc['value'] = pick(i + 5);
    return doc;
  });
  const asked: Record<string, unknown>[] = [];
  const source = {
    matching: () => local,
    all: () => local,
    resolveCollection: () => {
      throw new Error('the whole foreign collection is never asked for');
    },
    matchingIn: (_name: string, filter: Record<string, unknown>) => {
      asked.push(filter);
      return new Query(filter).find<ReadDocument>(foreign).all();
    },
  };
  const pipeline = [
    { $lookup: { from: 'foreign', localField: 'value', foreignField: 'key', as: 'byValue' } },
    { $lookup: { from: 'foreign', localField: 'ref', foreignField: '_id', as: 'byId' } },
    { $unwind: { path: '$byId', preserveNullAndEmptyArrays: true } },
    { $set: { 'byId.n': -1 } },
  ];
  const whole = new Aggregator(pipeline, {
    processingMode: ProcessingMode.CLONE_INPUT,
    collectionResolver: () => structuredClone(foreign),
  }).run(local);
  t.true(whole.filter((doc) => (doc['byValue'] as unknown[]).length > 1).length > 5, 'the data joins');
  t.deepEqual(runPipeline(source, pipeline), whole);
  t.true(
    asked.every((filter) => !Object.hasOwn(filter, '_id') || typeof filter['_id'] === 'string'),
    'an _id is a string: a null one is not looked for',
  );
  t.is(foreign[0]!['n'], 0, 'a stage writing into a joined document leaves the stored one alone');
});

test('$dateToString in a named zone answers as MongoDB: zones past Area/City taken, and the zone’s offset its own whatever zone the server runs in', (t) => {
  const at = (iso: string, timezone: string, format = '%Y-%m-%d %H:%M') =>
    runPipeline({ ...source, all: () => [{ _id: 'x' }] }, [
      { $project: { _id: 0, s: { $dateToString: { date: { $toDate: iso }, timezone, format } } } },
    ])[0]!['s'];
  t.is(at('2026-01-01T02:30:00Z', 'America/Argentina/Buenos_Aires'), '2025-12-31 23:30');
  t.is(at('2026-01-01T04:30:00Z', 'America/Port-au-Prince'), '2025-12-31 23:30');
  t.is(at('2026-01-01T04:30:00Z', 'Etc/GMT+5'), '2025-12-31 23:30');
  t.is(at('2026-01-01T02:00:00Z', 'America/St_Johns'), '2025-12-31 22:30');
  // An offset and a missing date as before.
  t.is(at('2026-01-01T02:00:00Z', '+05:30'), '2026-01-01 07:30');
  t.is(
    runPipeline({ ...source, all: () => [{ _id: 'x' }] }, [
      { $project: { _id: 0, s: { $dateToString: { date: '$none', timezone: 'Europe/Paris', onNull: '$_id' } } } },
    ])[0]!['s'],
    'x',
  );
  // The pipeline runs synchronously: the server's zone is New York's for it alone.
  const serverZone = process.env.TZ;
  process.env.TZ = 'America/New_York';
  try {
    // 23:00 on Saturday 7 March in Los Angeles, as New York moves to daylight saving; 22:00 on 31 October there, as it leaves it.
    t.is(at('2026-03-08T07:00:00Z', 'America/Los_Angeles'), '2026-03-07 23:00');
    t.is(at('2026-11-01T05:00:00Z', 'America/Los_Angeles'), '2026-10-31 22:00');
    t.is(at('2026-03-08T07:30:00Z', 'Pacific/Pago_Pago'), '2026-03-07 20:30');
  } finally {
    if (serverZone === undefined) delete process.env.TZ;
    else process.env.TZ = serverZone;
  }
});

test("weeks as MongoDB counts them: $week and %U from Sunday (the days before a year's first Sunday are week 0), %G the ISO week's year", (t) => {
  const days = ['2023-01-01', '2026-01-04', '2026-12-31', '2024-01-06', '2027-01-01', '2021-01-03'];
  const dated = days.map((day) => ({ _id: day, at: new Date(`${day}T12:00:00Z`) }));
  const at = { matching: () => dated, all: () => dated, resolveCollection: () => [], matchingIn: () => [] };
  const rows = runPipeline(at, [
    {
      $project: {
        week: { $week: '$at' },
        isoWeekYear: { $isoWeekYear: '$at' },
        written: { $dateToString: { date: '$at', format: '%U %G-W%V' } },
      },
    },
  ]);
  t.deepEqual(
    rows.map((r) => [r._id, r.week, r.isoWeekYear, r.written]),
    [
      ['2023-01-01', 1, 2022, '01 2022-W52'],
      ['2026-01-04', 1, 2026, '01 2026-W01'],
      ['2026-12-31', 52, 2026, '52 2026-W53'],
      ['2024-01-06', 0, 2024, '00 2024-W01'],
      ['2027-01-01', 0, 2026, '00 2026-W53'],
      ['2021-01-03', 1, 2020, '01 2020-W53'],
    ],
  );
  // In a zone: 03:00Z on Sunday 7 January 2024 is still Saturday the 6th in New York, week 0.
  const late = [{ _id: 'x', at: new Date('2024-01-07T03:00:00Z') }];
  const zoned = runPipeline({ ...at, matching: () => late, all: () => late }, [
    {
      $project: {
        week: { $week: { date: '$at', timezone: 'America/New_York' } },
        written: { $dateToString: { date: '$at', format: '%U', timezone: 'America/New_York' } },
      },
    },
  ]);
  t.deepEqual(zoned, [{ _id: 'x', week: 0, written: '00' }]);
});

/** Runs `project` over one document whose `at` is `iso`, with the server in `serverZone` for the run alone. */
const projected = (iso: string, project: Record<string, unknown>, serverZone = 'America/New_York') => {
  const one = [{ _id: 'x', at: new Date(iso) }];
  const previous = process.env.TZ;
  process.env.TZ = serverZone;
  try {
    return runPipeline({ ...source, matching: () => one, all: () => one }, [{ $project: { _id: 0, ...project } }])[0]!;
  } finally {
    if (previous === undefined) delete process.env.TZ;
    else process.env.TZ = previous;
  }
};

test('date parts in a named zone or an offset are that zone’s across its daylight saving changes, whatever zone the server runs in; UTC, GMT and names past Area/City taken', (t) => {
  const parts = (date: unknown, timezone: string) =>
    Object.fromEntries(
      ['$year', '$month', '$dayOfMonth', '$hour', '$minute', '$dayOfWeek', '$dayOfYear', '$week', '$isoWeek']
        .concat(['$isoDayOfWeek', '$isoWeekYear', '$second', '$millisecond'])
        .map((op) => [op.slice(1), { [op]: { date, timezone } }]),
    );
  // 06:30:15.250Z on Sunday 8 March 2026: 01:30 EST in New York just before its change (07:00Z), 03:30 EDT after.
  for (const serverZone of ['America/New_York', 'Australia/Lord_Howe', 'UTC']) {
    const before = projected('2026-03-08T06:30:15.250Z', parts('$at', 'America/New_York'), serverZone);
    t.deepEqual(
      before,
      {
        year: 2026,
        month: 3,
        dayOfMonth: 8,
        hour: 1,
        minute: 30,
        dayOfWeek: 1,
        dayOfYear: 67,
        week: 10,
        isoWeek: 10,
        isoDayOfWeek: 7,
        isoWeekYear: 2026,
        second: 15,
        millisecond: 250,
      },
      serverZone,
    );
    t.is(
      projected('2026-03-08T07:30:00Z', { h: { $hour: { date: '$at', timezone: 'America/New_York' } } }, serverZone).h,
      3,
    );
  }
  // New Year's Eve 23:30 in Buenos Aires (a three-part name) is 02:30Z; St John's is -03:30 in winter.
  const newYear = projected('2026-01-01T02:30:00Z', {
    ...parts('$at', 'America/Argentina/Buenos_Aires'),
    stJohns: { $hour: { date: '$at', timezone: 'America/St_Johns' } },
    utc: { $hour: { date: '$at', timezone: 'UTC' } },
    gmt: { $dayOfMonth: { date: '$at', timezone: 'GMT' } },
    etc: { $hour: { date: '$at', timezone: 'Etc/GMT+5' } },
    offset: { $minute: { date: '$at', timezone: '+0545' } },
    hours: { $hour: { date: '$at', timezone: '-03' } },
    plain: { $hour: ['$at'] },
  });
  t.like(newYear, {
    year: 2025,
    month: 12,
    dayOfMonth: 31,
    hour: 23,
    dayOfWeek: 4,
    dayOfYear: 365,
    week: 52,
    isoWeek: 1,
    isoWeekYear: 2026,
    stJohns: 23,
    utc: 2,
    gmt: 1,
    etc: 21,
    offset: 15,
    hours: 23,
    plain: 2,
  });
  t.deepEqual(
    projected('2026-11-01T05:30:00.007Z', {
      parts: { $dateToParts: { date: '$at', timezone: 'America/New_York' } },
      iso: { $dateToParts: { date: '$at', timezone: 'Australia/Lord_Howe', iso8601: true } },
    }),
    {
      // 01:30 EDT, the first 01:30 of New York's 1 November; 16:30 (+11, its daylight saving) on Sunday in Lord Howe.
      parts: { year: 2026, month: 11, day: 1, hour: 1, minute: 30, second: 0, millisecond: 7 },
      iso: { isoWeekYear: 2026, isoWeek: 44, isoDayOfWeek: 7, hour: 16, minute: 30, second: 0, millisecond: 7 },
    },
  );
  // A null date or zone answers null, as MongoDB's does; an unknown zone, or one spelt in another case, is refused.
  t.deepEqual(
    projected('2026-01-01T00:00:00Z', {
      y: { $year: { date: '$none', timezone: 'Europe/Paris' } },
      z: { $year: { date: '$at', timezone: null } },
      p: { $dateToParts: { date: null } },
    }),
    { y: null, z: null, p: null },
  );
  for (const zone of ['europe/paris', 'Mars/Olympus_Mons', '+5'])
    t.throws(() => projected('2026-01-01T00:00:00Z', { y: { $year: { date: '$at', timezone: zone } } }), {
      message: new RegExp(`unrecognized time zone identifier: "\\${zone}"`),
    });
});

test('$dateToString writes %% as a percent sign, %z and %Z as MongoDB (St John’s -0330 and -210), and a null date as null or onNull', (t) => {
  const at = '2026-01-15T12:00:00Z';
  const written = (format: string | undefined, timezone?: string, date: unknown = '$at') =>
    projected(at, { s: { $dateToString: { date, ...(format ? { format } : {}), ...(timezone ? { timezone } : {}) } } })
      .s;
  t.is(written('100%% at %H:%M%%'), '100% at 12:00%');
  t.is(written('%%U %%%U'), '%U %02');
  t.is(written('%H:%M %z %Z', 'America/St_Johns'), '08:30 -0330 -210');
  t.is(written('%z %Z', '-00:30'), '-0030 -30');
  t.is(written('%z %Z', 'Asia/Kathmandu'), '+0545 345');
  t.is(written('%b %B %j %w %u', 'Pacific/Kiritimati'), 'Jan January 016 6 5');
  // Without a format: ISO with a Z in UTC, without one in any other zone, as MongoDB writes them.
  t.is(written(undefined), '2026-01-15T12:00:00.000Z');
  t.is(written(undefined, 'Europe/Paris'), '2026-01-15T13:00:00.000');
  t.is(written('%Y', 'Europe/Paris', '$none'), null);
  t.is(written('%Y', 'Europe/Paris', null), null);
  t.is(projected(at, { s: { $dateToString: { date: '$none', onNull: 'never' } } }).s, 'never');
  t.throws(() => written('%Y%'), { message: /Unmatched '%' at end of format string/ });
  t.throws(() => written('%Q'), { message: /Invalid format character '%Q'/ });
});

test('$dateFromParts and $dateFromString with a timezone place the wall time in that zone; a wall time a change skips or repeats is refused, naming it', (t) => {
  const one = (expr: Record<string, unknown>) => projected('2026-01-01T00:00:00Z', { d: expr }, 'Europe/Paris').d;
  const iso = (value: unknown) => (value as Date).toISOString();
  t.is(
    iso(one({ $dateFromParts: { year: 2026, month: 3, day: 8, hour: 1, minute: 59, timezone: 'America/New_York' } })),
    '2026-03-08T06:59:00.000Z',
  );
  t.is(
    iso(one({ $dateFromParts: { year: 2026, month: 3, day: 8, hour: 3, timezone: 'America/New_York' } })),
    '2026-03-08T07:00:00.000Z',
  );
  t.is(
    iso(one({ $dateFromParts: { year: 2026, month: 1, day: 1, timezone: 'America/Argentina/Buenos_Aires' } })),
    '2026-01-01T03:00:00.000Z',
  );
  t.is(iso(one({ $dateFromParts: { year: 2026, month: 14, day: 0, timezone: '-03:30' } })), '2027-01-31T03:30:00.000Z');
  t.is(iso(one({ $dateFromParts: { year: 50, millisecond: 5 } })), '0050-01-01T00:00:00.005Z');
  t.is(
    iso(one({ $dateFromParts: { isoWeekYear: 2026, isoWeek: 53, isoDayOfWeek: 5, timezone: 'Asia/Tokyo' } })),
    '2026-12-31T15:00:00.000Z',
  );
  t.is(one({ $dateFromParts: { year: 2026, hour: null, timezone: 'Europe/Paris' } }), null);
  t.throws(
    () => one({ $dateFromParts: { year: 2026, month: 3, day: 8, hour: 2, minute: 30, timezone: 'America/New_York' } }),
    {
      message: /\$dateFromParts: 2026-03-08T02:30:00.000 does not exist in America\/New_York/,
    },
  );
  t.throws(
    () => one({ $dateFromParts: { year: 2026, month: 11, day: 1, hour: 1, minute: 30, timezone: 'America/New_York' } }),
    {
      message: /\$dateFromParts: 2026-11-01T01:30:00.000 comes twice in America\/New_York/,
    },
  );
  t.is(
    iso(one({ $dateFromString: { dateString: '2026-07-01T12:00:00.000', timezone: 'Europe/London' } })),
    '2026-07-01T11:00:00.000Z',
  );
  t.is(
    iso(one({ $dateFromString: { dateString: '2026-03-08', format: '%Y-%m-%d', timezone: 'America/New_York' } })),
    '2026-03-08T05:00:00.000Z',
  );
  t.is(
    one({ $dateFromString: { dateString: '2026-03-08T12:00:00Z', timezone: 'Europe/Paris', onError: 'both' } }),
    'both',
  );
  t.throws(() => one({ $dateFromString: { dateString: '2026-03-29T02:30:00.000', timezone: 'Europe/Paris' } }), {
    message: /\$dateFromString: 2026-03-29T02:30:00.000 does not exist in Europe\/Paris/,
  });
});
