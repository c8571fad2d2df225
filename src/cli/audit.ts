import { createWriteStream, existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { SingleBar } from 'cli-progress';
import { ConfigError, type WeirConfig } from '../app/config.ts';
import type { BundleCounts } from '../audit/audit-bundle.ts';
import type { AuditProgress, AuditReport } from '../audit/audit-verify.ts';
import type { EventStore } from '../event-store/event-store.ts';
import { EventLogUnreadableError, createSqliteEventStore } from '../event-store/sqlite-event-store.ts';
import { ALL_PROJECTIONS, READ_MODEL_INDEXES } from '../projections/all-projections.ts';
import { PROJECTIONS_CHECKPOINT } from '../projections/projection-runner.ts';
import { openReadStore } from '../read-store/open-read-store.ts';
import type { AbsentReadModels, LiveReadModels } from '../audit/verify-read-models.ts';
import { ReadModelsUnreadableError, SQLITE_READ_STORE_FILE } from '../read-store/sqlite-read-store.ts';
import { publishedCheckpointOf, type LoggedCheckpoint } from '../audit/checkpoints.ts';
import { OPERATOR_KEY_FILE, isPublicKeyText, operatorPublicKey } from '../audit/operator-key.ts';
import { existingLogFile } from './existing-log-file.ts';
import { organizationRecordId } from '../actors/organization.ts';
import { options } from './option-values.ts';

/** Checkpoints published elsewhere: a file of one checkpoint as `weir audit checkpoint` prints it, a JSON array, or JSON lines. */
export async function readPublishedCheckpoints(file: string): Promise<LoggedCheckpoint[]> {
  const text = await readFile(resolve(file), 'utf8').catch((error: NodeJS.ErrnoException) => {
    throw new ConfigError(`--checkpoint: cannot read ${resolve(file)} (${error.code ?? 'unreadable'})`);
  });
  let values: unknown[];
  try {
    const parsed: unknown = JSON.parse(text);
    values = Array.isArray(parsed) ? parsed : [parsed];
  } catch {
    try {
      values = text
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as unknown);
    } catch {
      throw new ConfigError(`--checkpoint: ${resolve(file)} is neither JSON nor JSON lines`);
    }
  }
  return values.map((value, index) => {
    const checkpoint = publishedCheckpointOf(value);
    if (!checkpoint) throw new ConfigError(`--checkpoint: entry ${index + 1} of ${resolve(file)} is not a checkpoint`);
    return checkpoint;
  });
}

/**
 * The log as an auditor reads it: the embedded file is opened read-only (a copy in a directory the
 * auditor cannot write too), never created nor sealed by the reading, so a wrong --data-dir is an
 * error, not an empty log that holds.
 */
export async function openLogToAudit(config: WeirConfig, command: string): Promise<EventStore> {
  if (config.kurrentDbUrl) {
    const { openEventStore } = await import('../event-store/open-event-store.ts');
    return openEventStore({ kurrentDbUrl: config.kurrentDbUrl, dataDir: config.dataDir });
  }
  const path = existingLogFile(config, command);
  try {
    return createSqliteEventStore({ path, readonly: true });
  } catch (error) {
    if (error instanceof EventLogUnreadableError) throw new ConfigError(`${command}: ${error.message}`);
    throw error;
  }
}

/**
 * The live read models to compare with a rebuild, read without writing them: MongoDB's, or the
 * data dir's embedded file once a projection has written it; otherwise why there are none (and
 * whether that fails the verification).
 */
export async function openLiveReadModels(
  config: WeirConfig,
): Promise<{ live: LiveReadModels; close(): Promise<void> } | AbsentReadModels> {
  const embeddedFile = join(config.dataDir, SQLITE_READ_STORE_FILE);
  if (!config.mongoDbUrl && !existsSync(embeddedFile))
    return { absent: `no read models in ${embeddedFile} yet: weir serve (or weir replay) writes them` };
  let readStore: Awaited<ReturnType<typeof openReadStore>>;
  try {
    readStore = await openReadStore({
      mongoDbUrl: config.mongoDbUrl,
      ...READ_MODEL_INDEXES,
      dataDir: config.dataDir,
      readonly: true,
    });
  } catch (error) {
    if (error instanceof ReadModelsUnreadableError) return { absent: error.message };
    throw error;
  }
  // A file no projection has written yet (a command opened it) has nothing to compare. One that holds
  // documents without the position they were written up to cannot be compared, and that is no pass:
  // removing the checkpoint row would otherwise hide an edited document behind "not compared".
  if (!config.mongoDbUrl && (await readStore.getCheckpoint(PROJECTIONS_CHECKPOINT)) === null) {
    let documents = 0;
    for (const name of new Set(ALL_PROJECTIONS.flatMap((projection) => projection.collections)))
      documents += await readStore.collection(name).count({});
    await readStore.close();
    if (documents > 0)
      return {
        absent: `${embeddedFile} holds ${documents} document${documents === 1 ? '' : 's'} but no checkpoint of the log position they were written up to (removed, or a first run stopped before writing one), so they cannot be compared with a rebuild: a weir serve or weir replay rebuilds them`,
        fails: true,
      };
    return { absent: `no read models in ${embeddedFile} yet: weir serve (or weir replay) writes them` };
  }
  return {
    live: { readStore, position: () => readStore.getCheckpoint(PROJECTIONS_CHECKPOINT) },
    close: () => readStore.close(),
  };
}

/**
 * The `--public-key` values, each an ed25519 public key as checkpoints name it: a typo is a usage
 * error, not a key that matches nothing (which would report every checkpoint as forged).
 */
export function publicKeyOptions(argv: string[]): string[] {
  const keys = options(argv, '--public-key');
  for (const key of keys)
    if (!isPublicKeyText(key))
      throw new ConfigError(
        `--public-key ${key} is not an ed25519 public key (the base64url of its 32 bytes, as a checkpoint's publicKey)`,
      );
  return keys;
}

/** Whence the keys checkpoints are checked against came: the summary names it beside them. */
export type KeySource =
  | { kind: 'pinned' }
  | { kind: 'given'; setting: string }
  | { kind: 'data-dir'; file: string }
  | { kind: 'none' };

export type TrustedKeys = { keys: string[]; from: KeySource };

/**
 * The keys checkpoints must be signed with, and whence they came. With `--public-key`, those
 * alone: the key in the data dir is not trusted then, since whoever can rewrite the log can replace
 * it and re-sign. Without, the operator's (given, or the data dir's own file); with none, nothing:
 * each checkpoint is checked against the key it names.
 */
export function trustedKeysOf(config: WeirConfig, argv: string[]): TrustedKeys {
  const pinned = publicKeyOptions(argv);
  if (pinned.length > 0) return { keys: pinned, from: { kind: 'pinned' } };
  const keyFile = join(config.dataDir, OPERATOR_KEY_FILE);
  const own = operatorPublicKey({ given: config.auditKey, keyFile });
  if (own === null) return { keys: [], from: { kind: 'none' } };
  return {
    keys: [own],
    from: config.auditKey
      ? { kind: 'given', setting: config.auditKeyFrom ?? 'WEIR_AUDIT_KEY' }
      : { kind: 'data-dir', file: keyFile },
  };
}

/** The summary's lines naming the key(s) trusted and whence, and what that is worth to an auditor. */
export function trustLines(trust: TrustedKeys): string[] {
  const pin = "pass the operator's published key with --public-key to trust it alone";
  const { keys, from } = trust;
  switch (from.kind) {
    case 'pinned':
      return keys.length === 1
        ? [`operator key: ${keys[0]}, given with --public-key`]
        : ['operator keys: given with --public-key', ...keys.map((key) => `  ${key}`)];
    case 'given':
      return [
        `operator key: checkpoints are checked against ${keys[0]}, the operator key given with ${from.setting}; ${pin}`,
      ];
    case 'data-dir':
      return [
        `operator key: checkpoints are checked against ${keys[0]}, the key in ${from.file}, the data dir's own: whoever can rewrite the log can replace it and re-sign; ${pin}`,
      ];
    case 'none':
      return [
        'operator key: none (none given, none in the data dir, no --public-key): each checkpoint is checked against the key it names in the log, which says nothing of who signed it',
      ];
  }
}

/** The checkpoints of one `--checkpoint FILE`. */
export type GivenCheckpoints = { file: string; checkpoints: LoggedCheckpoint[] };

/** Every `--checkpoint FILE`'s checkpoints, file by file, so the summary tells them from the log's own. */
export const givenCheckpointsOf = (argv: string[]): Promise<GivenCheckpoints[]> =>
  Promise.all(
    options(argv, '--checkpoint').map(async (file) => ({
      file: resolve(file),
      checkpoints: await readPublishedCheckpoints(file),
    })),
  );

/** `position 290`, `positions 120, 290`, `positions 10 to 290`: the positions a file's checkpoints sign. */
function positionsOf(checkpoints: readonly LoggedCheckpoint[]): string {
  const positions = [...new Set(checkpoints.map((checkpoint) => BigInt(checkpoint.position)))].sort((a, b) =>
    a < b ? -1 : a > b ? 1 : 0,
  );
  if (positions.length === 1) return `position ${positions[0]}`;
  if (positions.length <= 3) return `positions ${positions.join(', ')}`;
  return `positions ${positions[0]} to ${positions.at(-1)}`;
}

/**
 * The summary's lines under `checkpoints:` saying where each came from: the log's own, and each
 * `--checkpoint FILE` (published off the machine, the only ones a rewrite of the log cannot re-sign).
 */
export function checkpointSourceLines(
  checked: number,
  given: readonly GivenCheckpoints[],
  where: 'the log' | 'the bundle' = 'the log',
): string[] {
  // No checkpoint at all: nothing to tell apart (the unsigned line says to sign one).
  if (checked === 0 && given.length === 0) return [];
  const fromFiles = given.reduce((n, file) => n + file.checkpoints.length, 0);
  const rows: [number, string][] = [
    [checked - fromFiles, `found in ${where}`],
    ...given.map((file): [number, string] => [
      file.checkpoints.length,
      `from --checkpoint ${file.file}${file.checkpoints.length > 0 ? ` (for ${positionsOf(file.checkpoints)})` : ''}`,
    ]),
  ];
  const width = Math.max(...rows.map(([n]) => n.toLocaleString('en-US').length));
  return [
    ...rows.map(([n, what]) => `  ${n.toLocaleString('en-US').padStart(width)} ${what}`),
    given.length === 0
      ? `  none given with --checkpoint: whoever rewrites ${where} can re-sign its own, a copy published elsewhere proves it`
      : null,
  ].filter((line) => line !== null);
}

/**
 * Bars only on a terminal: a log or a pipe keeps every frame a bar draws (its 0% and 100% lines),
 * so off a terminal progress is one plain line per phase.
 */
export function progressStyle(stream: { isTTY?: boolean }): 'bars' | 'lines' {
  return stream.isTTY === true ? 'bars' : 'lines';
}

/** The phases of a verification on stderr: one bar per phase on a terminal, one line per phase elsewhere. */
export function verifyProgress(stream: NodeJS.WritableStream & { isTTY?: boolean } = process.stderr): {
  update(progress: AuditProgress): void;
  stop(): void;
} {
  const bar =
    progressStyle(stream) === 'bars'
      ? new SingleBar({ format: 'audit verify: {phase} [{bar}] {percentage}% | {detail}', stream })
      : null;
  let phase: string | null = null;
  const show = (name: string, total: number, value: number, detail: string) => {
    if (phase !== name) {
      if (phase !== null) bar?.stop();
      if (bar) bar.start(Math.max(total, 1), 0, { phase: name, detail });
      else stream.write(`audit verify: ${name}\n`);
      phase = name;
    }
    bar?.update(Math.min(value, total), { detail });
  };
  return {
    update(progress) {
      if (progress.phase === 'compare')
        show(
          'comparing read models',
          progress.of,
          progress.collections,
          `${progress.collections} of ${progress.of} collections`,
        );
      else {
        const total = progress.head === null ? 1 : Number(progress.head);
        show(
          progress.phase === 'chain' ? 'hash chain' : 'rebuilding read models',
          total,
          Number(progress.position),
          `${progress.events.toLocaleString('en-US')} events`,
        );
      }
    },
    stop() {
      if (phase !== null) bar?.stop();
    },
  };
}

/** The summary a person reads: what was checked (and against what), what holds, and the first thing that does not. */
export function summaryOf(report: AuditReport, against: { trust: TrustedKeys; given: GivenCheckpoints[] }): string {
  const { chain, readModels } = report;
  const lines = [
    `log: ${chain.events.toLocaleString('en-US')} events${chain.head ? `, head ${chain.head.position} ${chain.head.hash}` : ''}`,
    chain.unchainedEvents > 0
      ? `  ${chain.unchainedEvents.toLocaleString('en-US')} events written before the chain started (through position ${chain.unchainedThrough}): checked as a whole against their seal, not one by one`
      : null,
    `hash chain: ${chain.problemCount === 0 ? 'holds' : `${chain.problemCount} problem(s)`}`,
    ...trustLines(against.trust),
    `checkpoints: ${chain.checkpoints.checked} checked${chain.checkpoints.latest ? `, latest for position ${chain.checkpoints.latest.position}` : ''}`,
    ...checkpointSourceLines(chain.checkpoints.checked, against.given),
    chain.unsigned > 0
      ? `  ${chain.unsigned.toLocaleString('en-US')} events come after the last checkpoint: no signature covers them, so events cut from the log's end there would go unseen (sign the head: weir audit checkpoint --write)`
      : null,
    ...chain.problems
      .slice(0, 10)
      .map((problem) => `  ${problem.kind} at ${problem.position ?? '-'}: ${problem.message}`),
    chain.problemCount > 10 ? `  … and ${chain.problemCount - 10} more (see the JSON report)` : null,
    readModels.compared
      ? `read models: ${readModels.documents.toLocaleString('en-US')} documents in ${readModels.collections} collections at position ${readModels.position ?? '-'}: ${readModels.differenceCount === 0 ? 'match the rebuild' : `${readModels.differenceCount} difference(s)`}`
      : `read models: not compared (${readModels.reason})`,
    ...readModels.differences
      .slice(0, 10)
      .map(
        (difference) =>
          `  ${difference.collection}/${difference.id}: ${difference.kind}${difference.fields.length > 0 ? ` (${difference.fields.join(', ')})` : ''}`,
      ),
    readModels.differenceCount > 10 ? `  … and ${readModels.differenceCount - 10} more (see the JSON report)` : null,
    `${report.holds ? `OK: everything checked holds${chain.unsigned > 0 ? ` (no signature covers the last ${chain.unsigned.toLocaleString('en-US')} events yet)` : ''}` : 'FAILED'} (${(report.ms / 1000).toFixed(1)} s)`,
  ];
  return lines.filter((line) => line !== null).join('\n');
}

/** `weir audit export --org ID [--environment test|live] [--out FILE]`: the organization's bundle, to FILE or stdout. */
export async function exportBundle(deps: {
  eventStore: EventStore;
  argv: string[];
  publicKeys: string[];
  option: (name: string) => string | undefined;
}): Promise<void> {
  const organizationId = deps.option('--org');
  if (!organizationId) throw new ConfigError('audit export: --org ID is required');
  const given = deps.option('--environment') ?? null;
  if (given !== null && given !== 'test' && given !== 'live')
    throw new ConfigError(`--environment must be test or live, got ${given}`);
  const environment: 'test' | 'live' | null = given;
  // Every organization's log starts with its creation: none means a wrong id (or environment), told
  // before a line is written (to stdout it could not be taken back: a bundle of other tenants' links).
  const created = await Promise.all(
    (environment === null ? (['test', 'live'] as const) : [environment]).map(
      async (env) =>
        (await deps.eventStore.readStream(`organization-${organizationRecordId(organizationId, env)}`)).length > 0,
    ),
  );
  if (!created.includes(true)) throw noEventOf(organizationId, environment);
  const out = deps.option('--out');
  const totals: BundleCounts = { own: 0, checkpoints: 0, withheld: 0 };
  // The bundle's schemas are zod's (95 modules): loaded by the bundle commands alone, not by a verify of the log.
  const { auditBundleLines } = await import('../audit/audit-bundle.ts');
  const lines = auditBundleLines({
    eventStore: deps.eventStore,
    scope: { organizationId, environment },
    publicKeys: deps.publicKeys,
    now: Date.now,
    onWritten: (counts) => {
      totals.own += counts.own;
      totals.checkpoints += counts.checkpoints;
      totals.withheld += counts.withheld;
    },
  });
  await pipeline(Readable.from(lines), out ? createWriteStream(resolve(out)) : process.stdout);
  if (totals.own === 0) {
    if (out) await rm(resolve(out), { force: true });
    throw noEventOf(organizationId, environment);
  }
  console.error(
    `weir audit export: ${counted(totals.own, 'event')} of ${organizationId} and ${counted(totals.checkpoints, 'checkpoint')} in full, ${counted(totals.withheld, 'other event')} as links only${out ? `, in ${resolve(out)}` : ''}`,
  );
  if (deps.publicKeys.length === 0)
    console.error('weir audit export: no operator key (none given, none in the data dir): the bundle names no key');
}

/** `weir audit verify --bundle FILE`: offline, from the file alone (and any --public-key / --checkpoint). */
export async function verifyBundleFile(argv: string[], file: string): Promise<void> {
  const text = await readFile(resolve(file), 'utf8').catch((error: NodeJS.ErrnoException) => {
    throw new ConfigError(`--bundle: cannot read ${resolve(file)} (${error.code ?? 'unreadable'})`);
  });
  const trustedKeys = publicKeyOptions(argv);
  const given = await givenCheckpointsOf(argv);
  const { bundleSummaryOf, verifyBundle } = await import('../audit/verify-bundle.ts');
  const report = await verifyBundle({ text, trustedKeys, published: given.flatMap((file) => file.checkpoints) });
  const named = report.header?.publicKeys ?? [];
  const trust =
    trustedKeys.length > 0
      ? trustLines({ keys: trustedKeys, from: { kind: 'pinned' } })
      : [
          `operator key: no --public-key: checkpoints are checked against ${named.length > 0 ? named.join(', ') : 'the key each names'}, the key the bundle names, which says nothing of who signed it; pass the operator's published key`,
        ];
  console.error(
    bundleSummaryOf(report, {
      trust,
      sources: report.chain ? checkpointSourceLines(report.chain.checkpoints.checked, given, 'the bundle') : [],
    }),
  );
  if (argv.includes('--json')) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  process.exitCode = report.holds ? 0 : 1;
}

const noEventOf = (organizationId: string, environment: string | null): ConfigError =>
  new ConfigError(
    `audit export: the log holds no event of ${organizationId}${environment ? ` in ${environment}` : ''}: check --org${environment ? ' and --environment' : ''}`,
  );

/** `1 checkpoint`, `2 checkpoints`: the export's summary counts. */
const counted = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? '' : 's'}`;
