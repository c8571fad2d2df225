import { readmeSection, tableRows } from '../../test/support/readme.ts';
import test from 'ava';
import { LOCAL_CHAIN_FAMILIES } from '../app/config.ts';
import { argumentProblem, takesSetting } from './command-arguments.ts';
import { COMMAND_ARGUMENTS, USAGE } from './usage.ts';

/** The flags on a command's own lines of the usage (`  audit verify --bundle FILE …`), not its description's. */
const usageFlags = (command: string): Set<string> => {
  const lines = USAGE.split('\n').filter((line) => line.startsWith(`  ${command} `) || line === `  ${command}`);
  return new Set(lines.flatMap((line) => [...line.split(/ {2,}/)[1]!.matchAll(/--[a-z-]+/g)].map((m) => m[0])));
};

test('the usage lists every option each command takes, and none it refuses', (t) => {
  for (const [command, takes] of Object.entries(COMMAND_ARGUMENTS)) {
    t.true(USAGE.includes(`\n  ${command}`), `${command} is in the usage`);
    const listed = usageFlags(command);
    for (const own of [...(takes.valued ?? []), ...(takes.switches ?? [])])
      t.true(listed.has(own), `${command}: ${own} is in the usage`);
    for (const flag of listed)
      t.true(
        takes.valued?.includes(flag) || takes.switches?.includes(flag) || takesSetting(takes, flag),
        `${command}: the usage offers ${flag}, which it refuses`,
      );
  }
});

test("the README's Commands table names every command, and each flag it gives a command is one the command takes", async (t) => {
  const synopses = tableRows(readmeSection('### Commands'), (line) => line.startsWith('| `weir ')).map(([, cell]) =>
    cell!.replaceAll('`', '').slice('weir '.length),
  );
  for (const [command, takes] of Object.entries(COMMAND_ARGUMENTS)) {
    const synopsis = synopses.find((s) => s === command || s.startsWith(`${command} `));
    if (synopsis === undefined) {
      t.fail(`${command} has no row in the README's Commands table`);
      continue;
    }
    for (const flag of synopsis.match(/--[a-z-]+/g) ?? [])
      t.true(
        takes.valued?.includes(flag) || takes.switches?.includes(flag) || takesSetting(takes, flag),
        `README: weir ${command} is given ${flag}, which it refuses`,
      );
  }
  for (const synopsis of synopses)
    t.true(
      Object.keys(COMMAND_ARGUMENTS).some((command) => synopsis === command || synopsis.startsWith(`${command} `)),
      `README: weir ${synopsis} is no command`,
    );
});

test("devnet's note on serve's own local chains says --local-chain takes a list of them, not only off", (t) => {
  const note = USAGE.slice(USAGE.indexOf('\n  devnet '), USAGE.indexOf('\nOptions of every command'));
  t.true(
    note.replace(/\s+/g, ' ').includes(`--local-chain lists some of ${LOCAL_CHAIN_FAMILIES.join(',')} or is off`),
    note,
  );
});

test('weir devnet takes the log settings serve reads, and no other setting', (t) => {
  const devnet = COMMAND_ARGUMENTS['devnet']!;
  t.is(argumentProblem(['--port', '8545', '--log-level', 'debug', '--log-pretty'], devnet), null);
  t.is(argumentProblem(['--log-pretty', '1', '--log-level=warn'], devnet), null);
  t.is(argumentProblem(['--data-dir', 'x'], devnet), 'unknown option --data-dir (weir --help lists the options)');
});

test("--mongodb-url says what serves when it is unset: the data dir's read-models.sqlite3, kept across starts (it said rebuilt from the log at start)", (t) => {
  const line = USAGE.split('\n').find((l) => l.startsWith('  --mongodb-url '))!;
  t.regex(line, /DATA_DIR\/read-models\.sqlite3/);
  t.notRegex(line, /rebuilt from the log at start/);
});
