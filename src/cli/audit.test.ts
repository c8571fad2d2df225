import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import test from 'ava';
import { ConfigError, readConfig } from '../app/config.ts';
import type { AuditProgress, AuditReport } from '../audit/audit-verify.ts';
import { OPERATOR_KEY_FILE, loadOperatorKey } from '../audit/operator-key.ts';
import { verifyAudit } from '../audit/audit-verify.ts';
import { createSqliteEventStore } from '../event-store/sqlite-event-store.ts';
import { READ_MODEL_INDEXES } from '../projections/all-projections.ts';
import { SQLITE_READ_STORE_FILE, createSqliteReadStore } from '../read-store/sqlite-read-store.ts';
import {
  type GivenCheckpoints,
  type TrustedKeys,
  openLiveReadModels,
  progressStyle,
  publicKeyOptions,
  summaryOf,
  trustedKeysOf,
  trustLines,
  verifyProgress,
} from './audit.ts';
import { option, options } from './option-values.ts';

/** A stream that keeps what is written to it, a terminal or not. */
function capture(isTTY: boolean) {
  let text = '';
  const stream = Object.assign(
    new Writable({
      write(chunk: Buffer | string, _encoding, done) {
        text += String(chunk);
        done();
      },
    }),
    { isTTY, columns: 120 },
  );
  return { stream, text: () => text };
}

const steps: AuditProgress[] = [
  { phase: 'chain', events: 0, position: 0n, head: 4n },
  { phase: 'chain', events: 4, position: 4n, head: 4n },
  { phase: 'rebuild', events: 4, position: 4n, head: 4n },
  { phase: 'compare', collections: 1, of: 27 },
  { phase: 'compare', collections: 27, of: 27 },
];

test('bars only on a terminal: a log, a pipe or a file gets plain lines (no stream says it is a TTY unless it is one)', (t) => {
  t.is(progressStyle({ isTTY: true }), 'bars');
  t.is(progressStyle({ isTTY: false }), 'lines');
  t.is(progressStyle({}), 'lines');
});

test('off a terminal the verification writes one plain line per phase, with no bar, percentage or control character', (t) => {
  const { stream, text } = capture(false);
  const progress = verifyProgress(stream);
  for (const step of steps) progress.update(step);
  progress.stop();
  t.is(text(), 'audit verify: hash chain\naudit verify: rebuilding read models\naudit verify: comparing read models\n');
});

test('on a terminal the verification draws its bars', (t) => {
  const { stream, text } = capture(true);
  const progress = verifyProgress(stream);
  for (const step of steps) progress.update(step);
  progress.stop();
  t.regex(text(), /audit verify: hash chain \[=+\] 100%/);
  t.regex(text(), /comparing read models \[=+\] 100% \| 27 of 27 collections/);
});

const holding = (unsigned: number, checked: number): AuditReport => ({
  holds: true,
  startedAt: '2026-03-02T00:00:00.000Z',
  ms: 1200,
  chain: {
    holds: true,
    events: 293,
    unchainedEvents: 0,
    unchainedThrough: null,
    head: { position: '293', hash: 'h' },
    checkpoints: { checked, latest: null },
    unsigned,
    firstProblem: null,
    problems: [],
    problemCount: 0,
  },
  readModels: {
    compared: true,
    reason: null,
    holds: true,
    position: '293',
    collections: 27,
    documents: 120,
    differences: [],
    differenceCount: 0,
  },
});

const untrusting: { trust: TrustedKeys; given: GivenCheckpoints[] } = {
  trust: { keys: [], from: { kind: 'none' } },
  given: [],
};

test('the summary says how many events no signature covers, where a cut from the end would go unseen, and its OK says so', (t) => {
  const summary = summaryOf(holding(141, 0), untrusting);
  t.regex(summary, /141 events come after the last checkpoint: no signature covers them/);
  t.regex(summary, /weir audit checkpoint --write/);
  t.regex(summary, /^OK: everything checked holds \(no signature covers the last 141 events yet\)/m);
  const signed = summaryOf(holding(0, 2), untrusting);
  t.notRegex(signed, /no signature covers/);
  t.regex(signed, /^OK: everything checked holds \(1\.2 s\)$/m);
});

test('a --public-key that is no ed25519 public key is a usage error naming it, not a key every checkpoint fails against', (t) => {
  const key = 'Mvj6lAhMQuouWaryPBpQAYs0DWUsz-HlUY5jVZcmP1g';
  t.deepEqual(publicKeyOptions(['--public-key', key, `--public-key=${key}`]), [key, key]);
  for (const bad of ['nonsense', `${key}=`, key.slice(1), '-----BEGIN PUBLIC KEY-----'])
    t.throws(() => publicKeyOptions(['--public-key', bad]), {
      name: 'ConfigError',
      message: new RegExp(`--public-key .* is not an ed25519 public key`),
    });
});

test("--public-key pins trust: the data dir's own key is then not trusted; without it the key trusted is named, and whence it came", (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'weir-trusted-keys-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const config = readConfig(['--data-dir', dataDir], {});
  t.deepEqual(trustedKeysOf(config, []), { keys: [], from: { kind: 'none' } }, 'no key anywhere');
  t.regex(trustLines(trustedKeysOf(config, [])).join('\n'), /^operator key: none .*the key it names in the log/);

  const inDataDir = loadOperatorKey({ keyFile: join(dataDir, OPERATOR_KEY_FILE) });
  const published = loadOperatorKey({ keyFile: join(dataDir, 'published.key') });
  const pinned = trustedKeysOf(config, ['--public-key', published.publicKey]);
  t.deepEqual(
    pinned,
    { keys: [published.publicKey], from: { kind: 'pinned' } },
    "the given key alone, not the data dir's",
  );
  t.deepEqual(trustLines(pinned), [`operator key: ${published.publicKey}, given with --public-key`]);

  const own = trustedKeysOf(config, []);
  t.deepEqual(own.keys, [inDataDir.publicKey]);
  const [line] = trustLines(own);
  t.true(line?.includes(inDataDir.publicKey), line);
  t.true(line?.includes(join(dataDir, OPERATOR_KEY_FILE)), line);
  t.regex(line ?? '', /the data dir's own.*--public-key/);
});

test('the summary names the operator key trusted and the setting that gave it: --public-key, WEIR_AUDIT_KEY, --audit-key-file or WEIR_AUDIT_KEY_FILE with its path', (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'weir-trust-source-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const pem = readKeyPem(join(dataDir, 'operator.pem'));
  const operator = loadOperatorKey({ given: pem, keyFile: join(dataDir, 'unused.key') });
  const summaryWith = (argv: string[], env: NodeJS.ProcessEnv) =>
    summaryOf(holding(0, 1), {
      trust: trustedKeysOf(readConfig(['--data-dir', dataDir, ...argv], env), argv),
      given: [],
    });

  t.regex(
    summaryWith([], { WEIR_AUDIT_KEY: pem }),
    new RegExp(
      `^operator key: checkpoints are checked against ${operator.publicKey}, the operator key given with WEIR_AUDIT_KEY;`,
      'm',
    ),
  );
  const file = join(dataDir, 'operator.pem');
  t.true(
    summaryWith(['--audit-key-file', file], {}).includes(
      `checked against ${operator.publicKey}, the operator key given with --audit-key-file ${file};`,
    ),
  );
  t.true(
    summaryWith([], { WEIR_AUDIT_KEY_FILE: file }).includes(`the operator key given with WEIR_AUDIT_KEY_FILE ${file};`),
  );
  const pinned = summaryWith(['--public-key', operator.publicKey], {});
  t.regex(pinned, new RegExp(`^operator key: ${operator.publicKey}, given with --public-key$`, 'm'));
  t.regex(
    summaryWith(['--public-key', operator.publicKey, '--public-key', publicKeyOf(dataDir)], {}),
    new RegExp(`^operator keys: given with --public-key\n  ${operator.publicKey}\n  [A-Za-z0-9_-]{43}$`, 'm'),
  );
});

test('the summary tells the checkpoints found in the log from those given with --checkpoint, file by file, counts aligned', (t) => {
  const checkpoint = (position: string) => ({
    position,
    hash: 'a'.repeat(64),
    signedAt: '2026-03-02T00:00:00.000Z',
    publicKey: 'k',
    signature: 's',
    loggedAt: null,
  });
  const given: GivenCheckpoints[] = [
    { file: '/audit/published.json', checkpoints: [checkpoint('290')] },
    { file: '/audit/history.ndjson', checkpoints: ['10', '120', '200', '290'].map(checkpoint) },
  ];
  const summary = summaryOf(holding(0, 17), { trust: untrusting.trust, given });
  t.true(
    summary.includes(
      [
        'checkpoints: 17 checked',
        '  12 found in the log',
        '   1 from --checkpoint /audit/published.json (for position 290)',
        '   4 from --checkpoint /audit/history.ndjson (for positions 10 to 290)',
      ].join('\n'),
    ),
    summary,
  );
  // None given: the log's own alone, which a rewrite of the log re-signs.
  const own = summaryOf(holding(0, 2), untrusting);
  t.regex(own, /^checkpoints: 2 checked\n {2}2 found in the log\n {2}none given with --checkpoint: /m);
  t.notRegex(
    summaryOf(holding(5, 0), untrusting),
    /found in the log|--checkpoint:/,
    'no checkpoint at all: nothing to tell apart',
  );
});

test("a --public-key or --checkpoint with no value after it is a usage error, not dropped (the data dir's key then trusted)", (t) => {
  const config = readConfig(['--data-dir', tmpdir()], {});
  for (const name of ['--public-key', '--checkpoint'])
    t.throws(() => options(['verify', name], name), { instanceOf: ConfigError, message: `${name} needs a value` });
  t.throws(() => trustedKeysOf(config, ['verify', '--json', '--public-key']), {
    instanceOf: ConfigError,
    message: '--public-key needs a value',
  });
  t.deepEqual(options(['--checkpoint=', '--checkpoint', 'a'], '--checkpoint'), ['', 'a']);
});

test('a single-valued option (--bundle, --out, --org …) given last with no value is a usage error too: weir audit verify --bundle verified the data dir', (t) => {
  t.throws(() => option(['audit', 'verify', '--bundle'], '--bundle'), {
    instanceOf: ConfigError,
    message: '--bundle needs a value',
  });
  t.is(option(['audit', 'verify', '--bundle', 'b.jsonl'], '--bundle'), 'b.jsonl');
  t.is(option(['audit', 'verify', '--bundle=b.jsonl'], '--bundle'), 'b.jsonl');
  t.is(option(['audit', 'verify'], '--bundle'), undefined);
});

/** A new ed25519 private key, as PEM, also written to `file`. */
function readKeyPem(file: string): string {
  const pem = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  writeFileSync(file, pem, { mode: 0o600 });
  return pem;
}

/** The public key of a new key in `dir`. */
const publicKeyOf = (dir: string): string => loadOperatorKey({ keyFile: join(dir, 'another.key') }).publicKey;

test("read models that hold documents but no projection checkpoint are a failure named as such, not 'no read models yet' and OK", async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'weir-audit-unpositioned-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const config = readConfig(['--data-dir', dataDir], {});
  // A file no projection wrote (a command opened it): nothing to compare, and that holds.
  const blank = createSqliteReadStore({ path: join(dataDir, SQLITE_READ_STORE_FILE), ...READ_MODEL_INDEXES });
  await blank.close();
  const empty = await openLiveReadModels(config);
  t.true('absent' in empty && !('fails' in empty && empty.fails));
  // Documents, their checkpoint gone (taken away, or a first run stopped before it wrote one): one edited would go unseen.
  const store = createSqliteReadStore({ path: join(dataDir, SQLITE_READ_STORE_FILE), ...READ_MODEL_INDEXES });
  await store
    .collection('checkout_sessions')
    .put({ _id: 'cs_1', organizationId: 'org_1', environment: 'test', amountReceived: '1' });
  await store.close();
  const live = await openLiveReadModels(config);
  if (!('absent' in live)) {
    await live.close();
    return t.fail('compared against a position the read models do not have');
  }
  t.regex(live.absent, /holds 1 document but no checkpoint/);
  const eventStore = createSqliteEventStore({ path: join(dataDir, 'events.sqlite3') });
  t.teardown(() => eventStore.close());
  const report = await verifyAudit({ eventStore, trustedKeys: [], live });
  t.false(report.holds);
  t.false(report.readModels.holds);
  t.regex(summaryOf(report, { trust: { keys: [], from: { kind: 'none' } }, given: [] }), /FAILED/);
});
