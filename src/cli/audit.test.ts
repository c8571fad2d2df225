import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import test from 'ava';
import { ConfigError, readConfig } from '../app/config.ts';
import type { AuditProgress, AuditReport } from '../audit/audit-verify.ts';
import { OPERATOR_KEY_FILE, loadOperatorKey } from '../audit/operator-key.ts';
import { progressStyle, publicKeyOptions, summaryOf, trustedKeysOf, verifyProgress } from './audit.ts';
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

test('the summary says how many events no signature covers, where a cut from the end would go unseen, and its OK says so', (t) => {
  const summary = summaryOf(holding(141, 0));
  t.regex(summary, /141 events come after the last checkpoint: no signature covers them/);
  t.regex(summary, /weir audit checkpoint --write/);
  t.regex(summary, /^OK: everything checked holds \(no signature covers the last 141 events yet\)/m);
  const signed = summaryOf(holding(0, 2));
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
  t.deepEqual(trustedKeysOf(config, []).keys, [], 'no key anywhere');
  t.regex(trustedKeysOf(config, []).note ?? '', /no operator key/);

  const inDataDir = loadOperatorKey({ keyFile: join(dataDir, OPERATOR_KEY_FILE) });
  const published = loadOperatorKey({ keyFile: join(dataDir, 'published.key') });
  const pinned = trustedKeysOf(config, ['--public-key', published.publicKey]);
  t.deepEqual(pinned.keys, [published.publicKey], "the given key alone, not the data dir's");
  t.is(pinned.note, null);

  const own = trustedKeysOf(config, []);
  t.deepEqual(own.keys, [inDataDir.publicKey]);
  t.true(own.note?.includes(inDataDir.publicKey), own.note ?? '');
  t.true(own.note?.includes(join(dataDir, OPERATOR_KEY_FILE)), own.note ?? '');
  t.regex(own.note ?? '', /the data dir's own.*--public-key/);
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
