import { createHash, randomUUID } from 'node:crypto';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import Database from 'better-sqlite3';
import { auditBundleLines } from '../../src/audit/audit-bundle.ts';
import { writeCheckpoint } from '../../src/audit/checkpoints.ts';
import { loadOperatorKey } from '../../src/audit/operator-key.ts';
import { bundleSummaryOf, verifyBundle } from '../../src/audit/verify-bundle.ts';
import { verifyChain } from '../../src/audit/verify-chain.ts';
import { type ChainContent, contentDigest, tenantTag } from '../../src/event-store/event-chain.ts';
import type { EventStore } from '../../src/event-store/event-store.ts';
import { createSqliteEventStore } from '../../src/event-store/sqlite-event-store.ts';
import { createManualClock } from '../../src/shared/clock.ts';

/**
 * A log an older Weir wrote links its events with chain v1 (no tenant tag), and its bundles (version
 * 1) withhold lines without one. Both keep verifying: a log of v1 links then v2 ones, live and as a
 * bundle, and a version-1 bundle, whose summary says its withheld lines' tenants are unchecked.
 */

const directory = await mkdtemp(join(tmpdir(), 'weir-audit-chain-v1-'));
const key = loadOperatorKey({ keyFile: join(directory, 'audit-operator.key') });
const clock = createManualClock(Date.parse('2026-03-02T00:00:00.000Z'));
const OWN = 'org_v1_own';
const OTHER = 'org_v1_other';
const ROUNDS = 3;

const appendRounds = async (eventStore: EventStore, from: number) => {
  for (let round = from; round < from + ROUNDS; round += 1)
    for (const organizationId of [OWN, OTHER])
      await eventStore.append(
        `checkout_session-cs_${organizationId}_${round}`,
        [
          {
            id: randomUUID(),
            type: 'CheckoutSessionCreated',
            data: { amount: String(100_000_000 * (round + 1)) },
            metadata: {
              organizationId,
              environment: 'test',
              actor: 'system:test',
              correlationId: randomUUID(),
              occurredAt: '2026-03-02T00:00:00.000Z',
            },
          },
        ],
        'no_stream',
      );
};

/** Links every event of the file as chain v1 did: SHA-256 of `previous`, a newline, the digest. */
const relinkAsV1 = (path: string) => {
  const db = new Database(path);
  try {
    const rows = db
      .prepare<[], { position: number; id: string; stream_id: string; revision: number } & ChainContent>(
        'SELECT position, id, stream_id, revision, type, data, metadata FROM events ORDER BY position',
      )
      .all();
    const update = db.prepare('UPDATE events SET previous_hash = ?, hash = ? WHERE position = ?');
    let previous = '0'.repeat(64);
    for (const row of rows) {
      const digest = contentDigest({ ...row, streamId: row.stream_id });
      const hash = createHash('sha256').update(`${previous}\n${digest}`).digest('hex');
      update.run(previous, hash, row.position);
      previous = hash;
    }
  } finally {
    db.close();
  }
};

const exportOf = async (eventStore: EventStore): Promise<string> => {
  let text = '';
  for await (const chunk of auditBundleLines({
    eventStore,
    scope: { organizationId: OWN, environment: null },
    publicKeys: [key.publicKey],
    now: () => clock.now(),
  }))
    text += chunk;
  return text;
};

/** The old log (v1 links only) and its bundle as an older Weir exported it (version 1); then the same log gone on with v2 links. */
const built = (async () => {
  const oldPath = join(directory, 'old.sqlite3');
  const old = createSqliteEventStore({ path: oldPath });
  await appendRounds(old, 0);
  await old.close();
  relinkAsV1(oldPath);
  const path = join(directory, 'events.sqlite3');
  await copyFile(oldPath, path);
  const oldStore = createSqliteEventStore({ path: oldPath });
  const [header, ...rest] = (await exportOf(oldStore)).trimEnd().split('\n');
  await oldStore.close();
  const versionOne = [JSON.stringify({ ...JSON.parse(header!), version: 1 }), ...rest].join('\n');

  const eventStore = createSqliteEventStore({ path });
  await appendRounds(eventStore, ROUNDS);
  await writeCheckpoint({ eventStore, key, clock });
  const live = await verifyChain({ eventStore, trustedKeys: [key.publicKey] });
  const bundle = await exportOf(eventStore);
  await eventStore.close();
  return { versionOne, live, bundle };
})();

test.after.always(() => rm(directory, { recursive: true, force: true }));

type WithheldLine = { position: string; withheld?: true; tenant?: string };
const withheldLines = (text: string) =>
  text
    .trimEnd()
    .split('\n')
    .slice(1)
    .map((line) => JSON.parse(line) as WithheldLine)
    .filter((line) => line.withheld);

test('a log of v1 links followed by v2 ones verifies live', async (t) => {
  const { live } = await built;
  t.true(live.holds, JSON.stringify(live.problems));
  t.is(live.events, 4 * ROUNDS + 1);
  t.is(live.unchainedEvents, 0);
});

test("its bundle holds: the v1 events' withheld lines carry no tenant tag, the v2 ones' do, and the summary counts the unchecked", async (t) => {
  const { bundle } = await built;
  const report = await verifyBundle({ text: bundle, trustedKeys: [key.publicKey] });
  t.true(report.holds, JSON.stringify(report.problems));
  t.is(report.header?.version, 2);
  t.deepEqual(
    withheldLines(bundle).map((line) => [line.position, line.tenant !== undefined]),
    [
      ['2', false],
      ['4', false],
      ['6', false],
      ['8', true],
      ['10', true],
      ['12', true],
    ],
  );
  t.is(report.legacyWithheld, ROUNDS);
  t.regex(
    bundleSummaryOf(report),
    /^ {2}3 withheld links are chain v1 \(appended before the tenant tag\): whether they are this organization's own cannot be checked$/m,
  );
  t.regex(bundleSummaryOf(report), /OK: the bundle holds$/);
});

test('in the mixed log an own v2 event withheld with its real digest and tag is still found', async (t) => {
  const { bundle } = await built;
  const lines = bundle.trimEnd().split('\n');
  const own = JSON.parse(lines[7]!) as ChainContent & { position: string; previous: string; hash: string };
  t.is(own.streamId, `checkout_session-cs_${OWN}_3`);
  lines[7] = JSON.stringify({
    position: own.position,
    withheld: true,
    digest: contentDigest(own),
    tenant: tenantTag(own.previous, { organizationId: OWN, environment: 'test' }),
    previous: own.previous,
    hash: own.hash,
  });
  const report = await verifyBundle({ text: `${lines.join('\n')}\n`, trustedKeys: [key.publicKey] });
  t.false(report.holds);
  t.deepEqual(
    report.problems.map((p) => `${p.kind}@${p.position}`),
    ['withheld_own@7'],
  );
});

test("a version-1 bundle still verifies, and its summary says its withheld lines' tenants are unchecked", async (t) => {
  const { versionOne } = await built;
  const report = await verifyBundle({ text: versionOne, trustedKeys: [] });
  t.true(report.holds, JSON.stringify(report.problems));
  t.is(report.header?.version, 1);
  t.is(report.withheld, ROUNDS);
  t.is(report.legacyWithheld, ROUNDS);
  t.regex(
    bundleSummaryOf(report),
    /^ {2}3 withheld links are chain v1 \(a version-1 bundle\): whether they are this organization's own cannot be checked$/m,
  );
});
