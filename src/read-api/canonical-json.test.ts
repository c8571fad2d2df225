import test from 'ava';
import { canonicalJson, MAX_DEPTH } from './canonical-json.ts';

const same = (a: string, b: string) => canonicalJson(a) !== null && canonicalJson(a) === canonicalJson(b);

test('whitespace and key order at any depth do not change the canonical form', (t) => {
  t.is(canonicalJson(' { "b" : 1,\n\t"a": [ {"y":true,"x":null} ] }\r\n'), '{"a":[{"x":null,"y":true}],"b":1}');
  t.true(same('{"a":{"c":"x","b":"y"},"d":[1,2]}', '{"d":[1, 2],"a":{"b":"y","c":"x"}}'));
  t.is(canonicalJson('[]'), '[]');
  t.is(canonicalJson('{ }'), '{}');
  t.is(canonicalJson('  '), '', 'no body');
  t.is(canonicalJson('"text"'), '"text"');
});

test('a value, an added key or another array order is another document', (t) => {
  t.false(same('{"a":1}', '{"a":2}'));
  t.false(same('{"a":"1"}', '{"a":1}'));
  t.false(same('{"a":1}', '{"a":1,"b":null}'));
  t.false(same('{"a":[1,2]}', '{"a":[2,1]}'));
  t.false(same('{"a":{"b":true}}', '{"a":{"b":false}}'));
  t.false(same('{"a":null}', '{}'));
});

test('numbers compare by their exact decimal value, never through Number', (t) => {
  t.true(same('1', '1.0'));
  t.true(same('1', '10e-1'));
  t.true(same('100', '1E2'));
  t.true(same('1.50', '1.5'));
  t.true(same('0', '-0'));
  t.true(same('0.000', '0e10'));
  t.is(canonicalJson('[100, 1.5, -0.25, 12e+3, 1e007]'), '[1e2,15e-1,-25e-2,12e3,1e7]');
  // Past 2^53 Number would make these equal.
  t.false(same('9007199254740993', '9007199254740992'));
  t.false(same('123456789012345678901234567890', '123456789012345678901234567891'));
  t.false(same('1', '1.0000000000000000000001'));
  t.true(same('123456789012345678901234567890', '1234567890123456789012345678.90e2'));
});

test('strings compare by their value, escapes written one way; a repeated key keeps its last value', (t) => {
  t.true(same('{"a":"\\u0041\\/"}', '{"a":"A/"}'));
  t.true(same('{"\\u0061":1}', '{"a":1}'));
  t.false(same('{"a":"A"}', '{"a":"a"}'));
  t.is(canonicalJson('{"a":1,"b":2,"a":3}'), '{"a":3,"b":2}', 'as JSON.parse reads it');
  t.is(canonicalJson('"quote \\" and \\\\ backslash"'), JSON.stringify('quote " and \\ backslash'));
});

test('what is not one JSON value, or nests too deep, has no canonical form', (t) => {
  for (const text of [
    '{',
    '{"a":1,}',
    '[1,]',
    '{"a" 1}',
    '01',
    '1.',
    '.5',
    'tru',
    '{"a":1} x',
    '"\u0001"',
    '"\\x"',
    "{'a':1}",
    'NaN',
    '"open',
  ])
    t.is(canonicalJson(text), null, text);
  t.is(canonicalJson(`${'['.repeat(MAX_DEPTH + 2)}${']'.repeat(MAX_DEPTH + 2)}`), null);
  t.is(
    canonicalJson(`${'['.repeat(MAX_DEPTH)}${']'.repeat(MAX_DEPTH)}`),
    `${'['.repeat(MAX_DEPTH)}${']'.repeat(MAX_DEPTH)}`,
  );
});
