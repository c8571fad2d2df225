import test from 'ava';
import { Decimal128, Double, Int32, Long } from 'mongodb';
import {
  AnalyticsQueryError,
  inexactMessage,
  inexactNumberIn,
  MAX_ANSWER_DEPTH,
  nestsTooDeep,
  plainNumbers,
  safePipeline,
} from './analytics-query.ts';

test('an answer holding an integer past 2^53 - 1 is found where it is; exact numbers, strings and fractions pass', (t) => {
  t.is(inexactNumberIn([{ _id: 'usdc', total: Number.MAX_SAFE_INTEGER, avg: 1.5, big: '90071992547409930' }]), null);
  const found = inexactNumberIn([
    { _id: 'usdc', total: 1 },
    { _id: 'dai', sums: { total: 2 ** 53 + 2 } },
  ]);
  t.deepEqual(found, { path: 'data[1].sums.total', value: 2 ** 53 + 2 });
  t.regex(inexactMessage(found!), /data\[1\]\.sums\.total is 9007199254740994, past 2\^53 - 1/);
  t.deepEqual(inexactNumberIn([{ list: [1, -(2 ** 60)] }]), { path: 'data[0].list[1]', value: -(2 ** 60) });
});

test('MongoDB numbers (Long, Decimal128, Int32, Double) are checked as the embedded store answers them: an integer past 2^53 - 1 is refused, with its exact digits', (t) => {
  t.deepEqual(inexactNumberIn([{ _id: 'usdc', total: Long.fromString('9007199254740993') }]), {
    path: 'data[0].total',
    value: '9007199254740993',
  });
  t.deepEqual(inexactNumberIn([{ sums: [Decimal128.fromString('-12345678901234567890')] }]), {
    path: 'data[0].sums[0]',
    value: '-12345678901234567890',
  });
  t.deepEqual(inexactNumberIn([{ big: Decimal128.fromString('1.2345678901234567E+19') }])?.path, 'data[0].big');
  t.is(
    inexactNumberIn([
      {
        total: Long.fromNumber(Number.MAX_SAFE_INTEGER),
        low: Long.fromNumber(-Number.MAX_SAFE_INTEGER),
        avg: Decimal128.fromString('1.5'),
        count: new Int32(3),
        ratio: new Double(0.25),
        scaled: Decimal128.fromString('1.5E+3'),
      },
    ]),
    null,
  );
  t.regex(
    inexactMessage(inexactNumberIn([{ total: Long.fromString('-9007199254740993') }])!),
    /data\[0\]\.total is -9007199254740993, past 2\^53 - 1/,
  );
});

test('MongoDB numbers in an answer are made the JS numbers the embedded store answers, so the JSON is the same from both stores', (t) => {
  const answer = plainNumbers([
    {
      _id: { currency: 'usdc', day: new Int32(3) },
      total: Long.fromNumber(Number.MAX_SAFE_INTEGER),
      avg: Decimal128.fromString('1.5'),
      scaled: Decimal128.fromString('1.5E+3'),
      ratio: new Double(0.25),
      list: [Long.fromNumber(-2), 'text', null],
    },
  ]);
  t.deepEqual(answer, [
    {
      _id: { currency: 'usdc', day: 3 },
      total: Number.MAX_SAFE_INTEGER,
      avg: 1.5,
      scaled: 1500,
      ratio: 0.25,
      list: [-2, 'text', null],
    },
  ]);
  t.is(
    JSON.stringify(answer),
    `[{"_id":{"currency":"usdc","day":3},"total":${Number.MAX_SAFE_INTEGER},"avg":1.5,"scaled":1500,"ratio":0.25,"list":[-2,"text",null]}]`,
  );
});

test('a $regex that can backtrack without bound (a repeated group, a backreference, two repetitions) is refused, named, before it holds the embedded store; plain patterns run', (t) => {
  const tenant = { organizationId: 'o1', environment: 'test' };
  const match = (regex: unknown) => [{ $match: { $or: [{ clientReferenceId: { $regex: regex, $options: 'i' } }] } }];
  for (const [pattern, reason] of [
    ['^(a|a)*$', /repeated group/],
    ['^(a+)+!', /repeated group/],
    ['(x){2,}', /repeated group/],
    ['^(a)\\1$', /backreference/],
    ['.*a.*b', /more than one repetition/],
    ['a+b{1,9}', /more than one repetition/],
    // No quantifier at all, yet 2^n ways: each group's alternation.
    [`^${'(a|a)'.repeat(30)}$`, /more than one alternation/],
    [`^${'a?'.repeat(30)}${'a'.repeat(30)}$`, /more than one repetition/],
    ['(?:a|b)x|y', /more than one alternation/],
  ] as const) {
    const error = t.throws(() => safePipeline(match(pattern), tenant), { instanceOf: AnalyticsQueryError }, pattern);
    t.is(error?.field, 'pipeline[0].$match.$or[0].clientReferenceId.$regex', pattern);
    t.regex(error?.message ?? '', reason, pattern);
  }
  t.throws(() => safePipeline(match({ source: 'a' }), tenant), { message: 'must be a string pattern' });
  for (const pattern of [
    '^order-',
    'shop\\.example$',
    '^ord[*+(]er.*',
    '^a{3}x?',
    '(test|live)_',
    '[a-z]+@example',
    '^(?:www\\.)?shop',
    'a|b|c',
    '^[a-z]+?-',
  ])
    t.notThrows(() => safePipeline(match(pattern), tenant), pattern);
});

test('what the two read stores answer differently is refused, named: $dateTrunc in a time zone, $toDecimal (and $convert to decimal); $dateTrunc in UTC runs', (t) => {
  const tenant = { organizationId: 'o1', environment: 'test' };
  const project = (expression: unknown) => [{ $project: { x: expression } }];
  const date = { $toDate: '$createdAt' };
  for (const [expression, field, reason] of [
    [
      { $dateTrunc: { date, unit: 'day', timezone: 'America/New_York' } },
      'pipeline[0].$project.x.$dateTrunc',
      /in a time zone is refused.*\$dateToString/,
    ],
    [{ $dateTrunc: { date, unit: 'day', timezone: '$zone' } }, 'pipeline[0].$project.x.$dateTrunc', /time zone/],
    [{ $sum: { $toDecimal: '$amountTotal' } }, 'pipeline[0].$project.x.$sum.$toDecimal', /integer strings/],
    [{ $convert: { input: '$amountTotal', to: 'decimal' } }, 'pipeline[0].$project.x.$convert', /\$toLong/],
  ] as const) {
    const error = t.throws(() => safePipeline(project(expression), tenant), { instanceOf: AnalyticsQueryError });
    t.is(error?.field, field);
    t.regex(error?.message ?? '', reason);
  }
  t.notThrows(() => safePipeline(project({ $dateTrunc: { date, unit: 'day' } }), tenant));
  t.notThrows(() => safePipeline(project({ $dateTrunc: { date, unit: 'day', timezone: '+00:00' } }), tenant));
  t.notThrows(() => safePipeline(project({ $convert: { input: '$amountTotal', to: 'long' } }), tenant));
});

test('an answer nesting past the limit is found without recursing, however deep: one at the limit passes', (t) => {
  const nested = (levels: number) => {
    let value: unknown = 1;
    for (let i = 0; i < levels; i++) value = i % 2 ? [value] : { a: value };
    return value;
  };
  t.false(nestsTooDeep([nested(MAX_ANSWER_DEPTH)]));
  t.true(nestsTooDeep([nested(MAX_ANSWER_DEPTH + 1)]));
  // Deep enough to overflow a recursive walk.
  t.true(nestsTooDeep([nested(1_000_000)]));
  t.false(nestsTooDeep([{ when: new Date(0), amounts: Array.from({ length: 1000 }, (_, i) => ({ i })) }]));
});
