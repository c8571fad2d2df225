import { LOCAL_CHAIN_FAMILIES, SETTINGS } from '../app/config.ts';
import type { CommandArguments } from './command-arguments.ts';

/** The only settings `weir devnet` takes: its log's, as serve reads them. */
export const DEVNET_SETTING_FLAGS: readonly string[] = [SETTINGS.logLevel.flag, SETTINGS.logPretty.flag];

/** Column widths of the options list: the longest flag and the longest variable name. */
const FLAG_WIDTH = Math.max(...Object.values(SETTINGS).map((s) => s.flag.length));
const ENV_WIDTH = Math.max(...Object.values(SETTINGS).map((s) => s.env.length));

/** `weir --help`: each command with what it takes (held against COMMAND_ARGUMENTS by usage.test.ts), then the settings. */
export const USAGE = `Usage: weir <command> [options]

Commands:
  serve                      API, projections, matcher, webhook dispatcher and timers in one process
  org create --name NAME     create an organization; prints its id and one test and one live secret key (shown once)
  user create --org ID --email EMAIL --role owner|admin|developer|viewer [--name NAME] [--password-stdin]
                             a dashboard user; the password from standard input (--password-stdin), else
                             WEIR_USER_PASSWORD, else asked on the terminal; prints the user's id
  replay [--json]            drop and rebuild every read model from the log; a summary on stderr (events by
                             type, documents by read model; --json: the report on stdout)
  backup --out DIR           copy the data dir into DIR (a new folder), beside a running serve too: the SQLite
                             files through SQLite's online backup (their -wal included), keys, chain checkpoints,
                             mails as files; DIR is a data dir (serve --data-dir DIR starts on it), checked as
                             --verify does before it is reported (a copy that fails is removed, exit 1)
  backup --verify DIR        check a backup, or a data dir restored from one: SQLite's integrity_check on each
                             .sqlite3 file, and that its read models belong to its log (not past its end, their
                             organizations in it); names the file at fault; exit 0 only when it holds
  restore --from BACKUP [--force]
                             copy a backup into the data dir (--data-dir), once it verifies as --verify checks (else
                             exit 2 naming the problem); refused while a weir serve holds the data dir, and when it
                             holds anything unless --force moves that aside to DATA_DIR.before-restore-<time>
                             (nothing is deleted); the result checked again before OK
  audit verify [--public-key KEY]... [--checkpoint FILE]... [--json]
                             walk the whole log: recompute its hash chain, check every signed checkpoint (those in
                             the log and those published in FILE), rebuild every read model and compare it with the
                             live one (MongoDB, or read-models.sqlite3 in the data dir);
                             a summary on stderr (--json: the report on stdout); exit 0 only when everything holds
  audit checkpoint [--write] print the latest signed checkpoint of the log's hash chain (--write: sign the head now,
                             appending the checkpoint to the log); exit 1 while the log holds none
  audit export --org ID [--environment test|live] [--out FILE]
                             the organization's self-verifying bundle (NDJSON, to FILE or stdout): its events in
                             full with their chain links, other tenants' events as links only, the checkpoints
  audit verify --bundle FILE [--public-key KEY]... [--checkpoint FILE]... [--json]
                             check a bundle offline: its events' hashes, the links, the checkpoints; exit 0 only
                             when it holds
  machines export [--out DIR] write every statechart as JSON for the Stately editor (default ./machines-json)
  inspect RECORD_ID [--inspect PORT|URL] [--step-ms N]
                             replay one session's, invoice's, subscription's, payment link's, coupon's or webhook
                             delivery's events through its statechart in the Stately inspector, one step every N ms
                             (default 500); --inspect as for serve (default: the inspector's bridge page on port 8090,
                             the replay starting once the page is open)
  health [--url URL]         ask a running Weir's /health (default http://HOST:PORT); prints it; exit 0 while ok
                             or degraded, 1 while failing or not answering
  devnet [--port N] [--out FILE] [--solana-port N] [--tron-port N]
                             a separate local EVM chain (anvil, chain id 31337, 127.0.0.1) with test USDC/USDT/DAI
                             and the forwarder factory, for serve --devnet FILE, a local Solana (127.0.0.1:8899,
                             chain id 1399811148, WEIR_RPC_1399811148) with test USDC/USDT, and a local Tron (chain
                             id 1416785484, a free port unless given; in FILE) with test USDT/USDC; prints its JSON
                             (and writes FILE) on stdout, logs its chains on stderr as serve logs (JSON lines, event
                             devnet.running); runs until stopped (serve runs its own local chains, all of them unless
                             --local-chain lists some of ${LOCAL_CHAIN_FAMILIES.join(',')} or is off)

Options of every command but devnet (${DEVNET_SETTING_FLAGS.join(' and ')} alone) and machines export (each also an
environment variable):
${Object.values(SETTINGS)
  .map(
    (s) =>
      `  ${s.flag.padEnd(FLAG_WIDTH)} ${s.env.padEnd(ENV_WIDTH)} ${s.description}${'default' in s ? ` (default ${s.default})` : ''}`,
  )
  .join('\n')}
`;

/** What each command takes on its command line (`argumentProblem`). */
export const COMMAND_ARGUMENTS: Record<string, CommandArguments> = {
  serve: { settings: true },
  'org create': { settings: true, valued: ['--name'] },
  'user create': {
    settings: true,
    valued: ['--org', '--email', '--role', '--name'],
    switches: ['--password-stdin'],
  },
  replay: { settings: true, switches: ['--json'] },
  backup: { settings: true, valued: ['--out', '--verify'] },
  restore: { settings: true, valued: ['--from'], switches: ['--force'] },
  'audit verify': { settings: true, valued: ['--public-key', '--checkpoint', '--bundle'], switches: ['--json'] },
  'audit checkpoint': { settings: true, switches: ['--write'] },
  'audit export': { settings: true, valued: ['--org', '--environment', '--out'] },
  devnet: { settings: DEVNET_SETTING_FLAGS, valued: ['--port', '--out', '--solana-port', '--tron-port'] },
  health: { settings: true, valued: ['--url'] },
  inspect: { settings: true, valued: ['--step-ms'], positionals: 1 },
  'machines export': { settings: false, valued: ['--out'] },
};
