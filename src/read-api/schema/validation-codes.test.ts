import test from 'ava';
import {
  amount,
  arrayOf,
  closedBody,
  metadata,
  objectField,
  oneOf,
  optional,
  required,
  requiredText,
  text,
  url,
  withCode,
  z,
} from './fields.ts';
import { validationErrorOf } from './route.ts';
import { issuing, validationCodes } from './validation-codes.ts';

/** A body of the kinds of field routes use: text with bounds, an enum, an amount, a URL, numbers, arrays, objects, a closure. */
const Sample = issuing(
  ['parameters_exclusive'],
  closedBody({
    name: requiredText({ max: 5 }),
    kind: oneOf(['a', 'b']),
    email: optional(text({ max: 50 }).refine((v) => v.includes('@'), withCode('must be an email', 'email_invalid'))),
    price: optional(amount()),
    link: optional(url()),
    count: optional(z.number({ error: withCode('must be an integer', 'parameter_invalid_integer') }).int()),
    tags: optional(arrayOf(text({ min: 1, max: 3 }), { max: 2 })),
    address: optional(objectField({ line1: required(text({ max: 10 })) })),
    metadata: optional(metadata()),
    a: optional(text()),
    b: optional(text()),
  }).superRefine((body, ctx) => {
    if (body.a !== undefined && body.b !== undefined)
      ctx.addIssue({ code: 'custom', message: withCode('send a or b, not both', 'parameters_exclusive') });
  }),
);

const VALID = { name: 'Ann', kind: 'a' };

/** Every way of making each field of `VALID` (and the body itself) bad, as a client might. */
const BAD: Record<string, unknown>[] = [
  ...['name', 'kind', 'email', 'price', 'link', 'count', 'tags', 'address', 'metadata', 'a'].flatMap((field) =>
    [
      undefined,
      null,
      '',
      ' ',
      'x'.repeat(6),
      'x'.repeat(60),
      12,
      1.5,
      -1,
      true,
      [],
      [''],
      ['x'.repeat(4)],
      ['a', 'b', 'c'],
      [null],
      {},
      { line1: null },
      { line1: 'x'.repeat(11) },
      { nope: 1 },
      'ftp://x',
      'not a url',
      'c',
      '1.5',
      { k: { deep: 1 } },
    ].map((value) => ({ ...VALID, [field]: value })),
  ),
  { ...VALID, a: 'x', b: 'y' },
  { ...VALID, unknown: 1 },
];

test('the codes read from a schema are exactly those validating bad input with it answers', (t) => {
  const answered = new Set<string>();
  for (const input of [...BAD, undefined, null, 'text', []]) {
    const result = Sample.safeParse(input);
    if (!result.success) answered.add(validationErrorOf(result.error).code);
  }
  t.deepEqual(validationCodes(Sample), [...answered].sort());
  t.deepEqual(validationCodes(Sample), [
    'email_invalid',
    'parameter_invalid',
    'parameter_invalid_integer',
    'parameter_invalid_string_empty',
    'parameter_missing',
    'parameters_exclusive',
    'url_invalid',
  ]);
});

test('an optional field answers no `is required`; one that is required does', (t) => {
  t.deepEqual(validationCodes(z.object({ note: optional(text({ max: 5, required: true })) })), ['parameter_invalid']);
  t.deepEqual(validationCodes(z.object({ note: requiredText({ max: 5 }) })), [
    'parameter_invalid',
    'parameter_invalid_string_empty',
    'parameter_missing',
  ]);
});

test("a closure's codes are out of a walk's sight until declared, with the schemas it parses with", (t) => {
  const hidden = z.unknown().transform((value, ctx) => {
    if (value === 'both') ctx.addIssue({ code: 'custom', message: withCode('not both', 'parameters_exclusive') });
    return value;
  });
  t.deepEqual(validationCodes(hidden), []);
  t.deepEqual(validationCodes(issuing(['parameters_exclusive', requiredText()], hidden)), [
    'parameter_invalid',
    'parameter_invalid_string_empty',
    'parameter_missing',
    'parameters_exclusive',
  ]);
});
