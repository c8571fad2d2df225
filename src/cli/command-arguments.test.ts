import test from 'ava';
import { readArguments } from './command-arguments.ts';

const INSPECT = { settings: true, valued: ['--step-ms'], positionals: 1 } as const;

test('readArguments finds a bare argument before, between or after the options, and gives the options without it', (t) => {
  for (const argv of [
    ['rec-1', '--step-ms', '100', '--data-dir', '/tmp/d'],
    ['--step-ms', '100', 'rec-1', '--data-dir', '/tmp/d'],
    ['--step-ms', '100', '--data-dir', '/tmp/d', 'rec-1'],
  ])
    t.deepEqual(readArguments(argv, INSPECT), {
      positionals: ['rec-1'],
      options: ['--step-ms', '100', '--data-dir', '/tmp/d'],
      problem: null,
    });
  // An option's value is not a bare argument, even when it looks like one.
  t.deepEqual(readArguments(['--data-dir', 'rec-1'], INSPECT), {
    positionals: [],
    options: ['--data-dir', 'rec-1'],
    problem: null,
  });
  t.like(readArguments(['a', 'b'], INSPECT), {
    problem: 'unexpected argument "b" (quote a value with spaces: --name "My Shop")',
  });
  t.like(readArguments(['a', '--prot', '9000'], INSPECT), {
    problem: 'unknown option --prot (weir --help lists the options)',
  });
});
