import test from 'ava';
import { BusArgumentError } from './errors.ts';
import { redeliveryDelay } from './redelivery.ts';
import { assertDurableName, assertPublishSubject, assertSubjectFilter, subjectMatchesFilter } from './subject.ts';

const cases: Array<[filter: string, subject: string, matches: boolean]> = [
  ['chain.eth.transfer', 'chain.eth.transfer', true],
  ['chain.eth.transfer', 'chain.eth.block', false],
  ['chain.*.transfer', 'chain.eth.transfer', true],
  ['chain.*.transfer', 'chain.eth.transfer.extra', false],
  ['chain.*.transfer', 'chain.transfer', false],
  ['chain.*', 'chain.eth', true],
  ['chain.*', 'chain.eth.block', false],
  ['chain.>', 'chain.eth', true],
  ['chain.>', 'chain.eth.block.x', true],
  ['chain.>', 'chain', false],
  ['>', 'anything.at.all', true],
  ['*.*', 'a.b', true],
  ['*.*', 'a', false],
  ['chain.eth', 'chain.ethereum', false],
];

for (const [filter, subject, matches] of cases) {
  test(`"${filter}" ${matches ? 'matches' : 'does not match'} "${subject}"`, (t) => {
    t.is(subjectMatchesFilter(filter, subject), matches);
  });
}

test('publish subjects must be literal and well formed', (t) => {
  t.notThrows(() => assertPublishSubject('chain.eth.transfer'));
  for (const bad of ['', 'chain..eth', 'chain.*', 'chain.>', 'chain.e th', '.chain', 'chain.']) {
    t.throws(() => assertPublishSubject(bad), { instanceOf: BusArgumentError }, bad);
  }
});

test('filters allow * anywhere and > only last', (t) => {
  for (const good of ['chain.>', 'chain.*.transfer', '>', '*', 'chain.eth.transfer']) {
    t.notThrows(() => assertSubjectFilter(good), good);
  }
  for (const bad of ['', 'chain.>.transfer', 'chain.e*', 'chain..x', 'chain.a>']) {
    t.throws(() => assertSubjectFilter(bad), { instanceOf: BusArgumentError }, bad);
  }
});

test('durable names are single API tokens', (t) => {
  t.notThrows(() => assertDurableName('projection-payments_v2'));
  for (const bad of ['', 'a.b', 'a*', 'a>', 'a b']) {
    t.throws(() => assertDurableName(bad), { instanceOf: BusArgumentError }, bad);
  }
});

test('redelivery backoff doubles and is capped', (t) => {
  t.deepEqual(
    [1, 2, 3, 4, 5, 6, 100].map((count) => redeliveryDelay(count, 50, 1_000)),
    [50, 100, 200, 400, 800, 1_000, 1_000],
  );
});
