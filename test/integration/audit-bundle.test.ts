import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { auditBundleLines } from '../../src/audit/audit-bundle.ts';
import { signCheckpoint, writeCheckpoint } from '../../src/audit/checkpoints.ts';
import { loadOperatorKey } from '../../src/audit/operator-key.ts';
import { bundleSummaryOf, verifyBundle, type BundleReport } from '../../src/audit/verify-bundle.ts';
import { type ChainContent, chainHash, contentDigest, tenantTag } from '../../src/event-store/event-chain.ts';
import type { EventMetadata } from '../../src/event-store/event-store.ts';
import { createSqliteEventStore } from '../../src/event-store/sqlite-event-store.ts';
import { createManualClock } from '../../src/shared/clock.ts';

/**
 * An organization's audit bundle is checked from its bytes alone, and every change to those bytes
 * (an edit, a removed line, two lines swapped, a forged checkpoint) is found where it is. Two
 * organizations interleave in the log; the bundle of one holds nothing of the other.
 */

const directory = await mkdtemp(join(tmpdir(), 'weir-audit-bundle-'));
const key = loadOperatorKey({ keyFile: join(directory, 'audit-operator.key') });
const clock = createManualClock(Date.parse('2026-03-02T00:00:00.000Z'));
const OWN = 'org_bundle_own';
const OTHER = 'org_bundle_other';
/** Figures only the other organization's events hold: none may appear in the own bundle. */
const OTHER_AMOUNT = '777123450000';
const OTHER_STREAM = 'checkout_session-cs_other_secret';

const metadataOf = (organizationId: string): EventMetadata => ({
  organizationId,
  environment: 'test',
  actor: 'system:test',
  correlationId: randomUUID(),
  occurredAt: '2026-03-02T00:00:00.000Z',
});

const built = (async () => {
  const eventStore = createSqliteEventStore({ path: join(directory, 'events.sqlite3') });
  for (let round = 0; round < 6; round += 1) {
    await eventStore.append(
      `checkout_session-cs_own${round}`,
      [
        {
          id: randomUUID(),
          type: 'CheckoutSessionCreated',
          data: { amount: String(100_000_000 * (round + 1)) },
          metadata: metadataOf(OWN),
        },
      ],
      'no_stream',
    );
    await eventStore.append(
      `${OTHER_STREAM}${round}`,
      [
        {
          id: randomUUID(),
          type: 'CheckoutSessionCreated',
          data: { amount: OTHER_AMOUNT },
          metadata: metadataOf(OTHER),
        },
      ],
      'no_stream',
    );
    if (round === 2) await writeCheckpoint({ eventStore, key, clock });
  }
  await writeCheckpoint({ eventStore, key, clock });
  let text = '';
  for await (const chunk of auditBundleLines({
    eventStore,
    scope: { organizationId: OWN, environment: null },
    publicKeys: [key.publicKey],
    now: () => clock.now(),
  }))
    text += chunk;
  await eventStore.close();
  return text;
})();

test.after.always(() => rm(directory, { recursive: true, force: true }));

const verify = (text: string): Promise<BundleReport> => verifyBundle({ text, trustedKeys: [key.publicKey] });
const kindsAndPositions = (report: BundleReport) => report.problems.map((p) => `${p.kind}@${p.position}`);
/** Header first, then one line per log position (1, 2, ...): line `n` is position `n`. */
const linesOf = async () => (await built).trimEnd().split('\n');
const withLines = (lines: string[]) => `${lines.join('\n')}\n`;

test('the bundle holds: own events and checkpoints in full, the other organization withheld', async (t) => {
  const report = await verify(await built);
  t.true(report.holds, JSON.stringify(report.problems));
  t.is(report.events, 6 + 2, 'six own events and two checkpoints');
  t.is(report.withheld, 6);
  t.is(report.chain?.checkpoints.checked, 2);
  t.is(report.unsigned, 0);
  t.is(report.header?.head?.position, '14');
});

test("the summary says what the withheld links are: other organizations' events, and with one environment the other's too", async (t) => {
  const report = await verify(await built);
  const both = bundleSummaryOf(report);
  t.regex(
    both,
    /^events: 8 held in full \(hashes recomputed\), 6 withheld \(other organizations' events; links only\)$/m,
  );
  const live = bundleSummaryOf({ ...report, header: { ...report.header!, environment: 'live' } });
  t.regex(
    live,
    /^events: 8 held in full \(hashes recomputed\), 6 withheld \(other organizations' events and this one's test events; links only\)$/m,
  );
});

test('the bundle holds nothing of the other organization: not its id, its streams, its amounts or its event ids', async (t) => {
  const text = await built;
  t.false(text.includes(OTHER));
  t.false(text.includes(OTHER_AMOUNT));
  t.false(text.includes('cs_other_secret'));
  const lines = await linesOf();
  const withheld = lines.slice(1).filter((line) => line.includes('"withheld":true'));
  t.is(withheld.length, 6);
  for (const line of withheld)
    t.deepEqual(Object.keys(JSON.parse(line)).sort(), ['digest', 'hash', 'position', 'previous', 'tenant', 'withheld']);
  // Salted with the link before it, no two of the other organization's tags are alike.
  t.is(new Set(withheld.map((line) => (JSON.parse(line) as { tenant: string }).tenant)).size, 6);
});

/** Line `at` (an own event) replaced with a withheld line of that event's real digest and link. */
const withheldInstead = (lines: string[], at: number, tenant: (previous: string) => string | undefined) => {
  const own = JSON.parse(lines[at]!) as ChainContent & { position: string; previous: string; hash: string };
  const { position, previous, hash } = own;
  lines[at] = JSON.stringify({
    position,
    withheld: true,
    digest: contentDigest(own),
    tenant: tenant(previous),
    previous,
    hash,
  });
  return withLines(lines);
};

test("an own event swapped for a withheld line with its real digest and tag is found: the tag is the organization's", async (t) => {
  const lines = await linesOf();
  t.true(lines[3]!.includes('200000000'));
  const report = await verify(
    withheldInstead(lines, 3, (previous) => tenantTag(previous, { organizationId: OWN, environment: 'test' })),
  );
  t.false(report.holds);
  t.deepEqual(kindsAndPositions(report), ['withheld_own@3']);
  t.regex(
    bundleSummaryOf(report),
    /withheld_own at 3: the event at 3 is org_bundle_own's but its content was withheld/,
  );
});

test('an own event swapped for a withheld line without a tag (as chain v1 wrote them) is found: its link hashes a tag', async (t) => {
  const report = await verify(withheldInstead(await linesOf(), 3, () => undefined));
  t.false(report.holds);
  t.deepEqual(kindsAndPositions(report), ['content_changed@3', 'withheld_own@3']);
});

test("an own event swapped for a withheld line with another tenant's tag does not hash to its link", async (t) => {
  const report = await verify(
    withheldInstead(await linesOf(), 3, (previous) =>
      tenantTag(previous, { organizationId: OTHER, environment: 'test' }),
    ),
  );
  t.deepEqual(kindsAndPositions(report), ['content_changed@3']);
});

test("an edited event's content is found at its position", async (t) => {
  const lines = await linesOf();
  t.true(lines[3]!.includes('"position":"3"'));
  const edited = lines[3]!.replace('200000000', '900000000');
  t.not(edited, lines[3]);
  lines[3] = edited;
  const report = await verify(withLines(lines));
  t.false(report.holds);
  t.deepEqual(kindsAndPositions(report), ['content_changed@3']);
});

test("an edited event cannot hide behind a rewritten withheld link: the withheld event's link is recomputed from its digest", async (t) => {
  const lines = await linesOf();
  const own = JSON.parse(lines[3]!) as ChainContent & { previous: string; hash: string };
  const edited = { ...own, data: own.data.replace('200000000', '900000000') };
  t.not(edited.data, own.data);
  // The forger recomputes the edited event's own link and points the next (withheld) line at it,
  // keeping that line's hash so every link after it still follows.
  edited.hash = chainHash(edited.previous, edited);
  const next = JSON.parse(lines[4]!) as { withheld: boolean; previous: string };
  t.true(next.withheld);
  next.previous = edited.hash;
  lines[3] = JSON.stringify(edited);
  lines[4] = JSON.stringify(next);
  const report = await verify(withLines(lines));
  t.false(report.holds);
  t.deepEqual(kindsAndPositions(report), ['content_changed@4']);
});

test('a withheld line without its digest is malformed, not taken on trust', async (t) => {
  const lines = await linesOf();
  const { digest: _digest, ...stripped } = JSON.parse(lines[4]!) as Record<string, unknown>;
  lines[4] = JSON.stringify(stripped);
  const report = await verify(withLines(lines));
  t.false(report.holds);
  t.true(kindsAndPositions(report).includes('line_malformed@4'));
});

test('a deleted event is found: the event after it no longer follows', async (t) => {
  const lines = await linesOf();
  lines.splice(5, 1);
  t.deepEqual(kindsAndPositions(await verify(withLines(lines))), ['link_broken@6']);
});

test('a deleted withheld link is found the same way', async (t) => {
  const lines = await linesOf();
  t.true(lines[4]!.includes('"withheld":true'));
  lines.splice(4, 1);
  t.deepEqual(kindsAndPositions(await verify(withLines(lines))), ['link_broken@5']);
});

test('two events swapped are found where the order breaks: at both and at the one after', async (t) => {
  const lines = await linesOf();
  [lines[9], lines[10]] = [lines[10]!, lines[9]!];
  t.deepEqual(kindsAndPositions(await verify(withLines(lines))), ['link_broken@9', 'link_broken@10', 'link_broken@11']);
});

test('lines cut from the end are found against the header', async (t) => {
  const lines = await linesOf();
  lines.splice(-2);
  const report = await verify(withLines(lines));
  t.deepEqual(kindsAndPositions(report), ['head_mismatch@12']);
});

test('a forged checkpoint signature is found at the checkpoint', async (t) => {
  const lines = await linesOf();
  const at = lines.findIndex((line) => line.includes('AuditCheckpointSigned'));
  const signature = /\\"signature\\":\\"([A-Za-z0-9_-]+)\\"/.exec(lines[at]!)![1]!;
  const forged = `${signature[0] === 'A' ? 'B' : 'A'}${signature.slice(1)}`;
  lines[at] = lines[at]!.replace(signature, forged);
  const report = await verify(withLines(lines));
  t.false(report.holds);
  t.true(kindsAndPositions(report).includes(`checkpoint_forged@${at}`), JSON.stringify(report.problems));
});

test("a checkpoint re-signed with another key is found, the bundle's own key notwithstanding", async (t) => {
  const other = loadOperatorKey({ keyFile: join(directory, 'someone-else.key') });
  const report = await verifyBundle({ text: await built, trustedKeys: [other.publicKey] });
  t.false(report.holds);
  t.is(report.problems.filter((p) => p.kind === 'checkpoint_forged').length, 2);
});

test('a line that is neither an event nor a link, and a header that is not one, are named', async (t) => {
  const lines = await linesOf();
  lines[2] = '{"position":"2","nonsense":true}';
  t.true(kindsAndPositions(await verify(withLines(lines))).includes('line_malformed@2'));
  const headless = await verify(withLines(lines.slice(1)));
  t.deepEqual(kindsAndPositions(headless), ['header_malformed@null']);
});

test('a checkpoint published elsewhere is checked against the bundle: one that holds, one for a hash the bundle does not have', async (t) => {
  const lines = await linesOf();
  const at6 = JSON.parse(lines[6]!) as { position: string; hash: string };
  const published = signCheckpoint(key, { position: 6n, hash: at6.hash }, new Date(clock.now()));
  const holds = await verifyBundle({
    text: await built,
    trustedKeys: [key.publicKey],
    published: [{ ...published, loggedAt: null }],
  });
  t.true(holds.holds, JSON.stringify(holds.problems));
  t.is(holds.chain?.checkpoints.checked, 3);
  const other = signCheckpoint(key, { position: 6n, hash: 'f'.repeat(64) }, new Date(clock.now()));
  const rewritten = await verifyBundle({
    text: await built,
    trustedKeys: [key.publicKey],
    published: [{ ...other, loggedAt: null }],
  });
  t.deepEqual(kindsAndPositions(rewritten), ['checkpoint_mismatch@6']);
});
