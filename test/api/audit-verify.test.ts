import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import Database from 'better-sqlite3';
import { latestCheckpoint } from '../../src/audit/checkpoints.ts';
import { INDEXED_FIELDS } from '../../src/projections/all-projections.ts';
import { COLLECTIONS } from '../../src/projections/collections.ts';
import { SQLITE_READ_STORE_FILE } from '../../src/read-store/sqlite-read-store.ts';
import type { ReadDocument } from '../../src/read-store/read-store.ts';
import { createManualClock } from '../../src/shared/clock.ts';
import { apiClient, eventually } from '../support/api-client.ts';
import { createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';
import type { Session } from './helpers.ts';

type Verification = {
  holds: boolean;
  chain: {
    holds: boolean;
    events: number;
    head: { position: string; hash: string } | null;
    checkpoints: { checked: number; latest: { position: string; loggedAt: string | null } | null };
    firstProblem: { kind: string; position: string | null } | null;
  };
  readModels: {
    compared: boolean;
    holds: boolean;
    position: string | null;
    documents: number;
    differences: { collection: string; id: string; kind: string; fields: string[] }[];
    differenceCount: number;
  };
};

test('GET /audit/verify: the chain and checkpoints hold, and the tenant’s read models match a rebuild until one is changed behind Weir’s back', async (t) => {
  const clock = createManualClock(Date.parse('2026-03-01T00:00:00.000Z'));
  const weir = await startTestWeir(t, { auditCheckpointSeconds: 60 }, { clock });
  const alice = await createMerchant(weir.url, 'Alice');
  const bob = await createMerchant(weir.url, 'Bob');
  const session = (await alice.api.post<Session>('/api/v1/checkout/sessions', sessionRequest())).body;
  const other = (await alice.api.post<Session>('/api/v1/checkout/sessions', sessionRequest('1000'))).body;
  await bob.api.post<Session>('/api/v1/checkout/sessions', sessionRequest());

  // A minute on, the log is signed.
  const head = await weir.eventStore.headPosition();
  clock.advanceBy(60_000);
  const checkpoint = await eventually(
    () => latestCheckpoint(weir.eventStore).then((c) => c ?? undefined),
    'a checkpoint',
  );
  t.is(checkpoint.position, String(head));

  const verified = await alice.api.get<Verification>('/api/v1/audit/verify');
  t.is(verified.status, 200, JSON.stringify(verified.body));
  t.true(verified.body.holds, JSON.stringify(verified.body));
  t.is(verified.body.chain.events, Number(await weir.eventStore.headPosition()));
  t.is(verified.body.chain.checkpoints.checked, 1);
  t.is(verified.body.chain.firstProblem, null);
  t.true(verified.body.readModels.compared);
  t.true(verified.body.readModels.documents > 0);
  t.deepEqual(verified.body.readModels.differences, []);

  // Alice's session changed in the read store itself, one of hers removed, one added: each is named.
  const sessions = weir.readStore.collection<ReadDocument>(COLLECTIONS.checkoutSessions);
  const stored = (await sessions.get(session.id))!;
  await sessions.put({ ...stored, status: 'complete', amountTotal: '1' });
  await sessions.put({ ...stored, _id: 'cs_forged' });
  await sessions.delete(other.id);

  const tampered = await alice.api.get<Verification>('/api/v1/audit/verify');
  t.is(tampered.status, 200);
  t.false(tampered.body.holds);
  t.true(tampered.body.chain.holds);
  t.false(tampered.body.readModels.holds);
  const named = tampered.body.readModels.differences.map(
    (d) => `${d.collection}/${d.id}:${d.kind}:${d.fields.join(',')}`,
  );
  t.deepEqual(
    named.sort(),
    [
      `checkout_sessions/${other.id}:missing:`,
      `checkout_sessions/${session.id}:different:status,amountTotal`,
      'checkout_sessions/cs_forged:unexpected:',
    ].sort(),
  );

  // Bob's read models are his own: none of Alice's differences is his.
  const bobs = await bob.api.get<Verification>('/api/v1/audit/verify');
  t.true(bobs.body.holds, JSON.stringify(bobs.body.readModels.differences));
  t.is(bobs.body.chain.head?.hash, tampered.body.chain.head?.hash);
});

test('GET /audit/verify finds an indexed column of the read-model file edited behind Weir’s back: the body still matches the rebuild, but lists read the column; a tenant column moved to another tenant is reported to the tenant whose document it is', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'weir-audit-misindexed-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const clock = createManualClock(Date.parse('2026-03-01T00:00:00.000Z'));
  const first = await startTestWeir(t, { dataDir }, { clock });
  const alice = await createMerchant(first.url, 'Alice');
  const bob = await createMerchant(first.url, 'Bob');
  const session = (await alice.api.post<Session>('/api/v1/checkout/sessions', sessionRequest())).body;
  const moved = (await alice.api.post<Session>('/api/v1/checkout/sessions', sessionRequest('1000'))).body;
  const listedOpen = async (api: ReturnType<typeof apiClient>) =>
    (await api.get<{ data: Session[] }>('/api/v1/checkout/sessions?status=open')).body.data.map((listed) => listed.id);
  t.true((await listedOpen(alice.api)).includes(session.id));
  await first.stop();

  // The file edited while no Weir runs: the session's status column only, not its body.
  const db = new Database(join(dataDir, SQLITE_READ_STORE_FILE));
  const edited = db
    .prepare(`UPDATE documents SET k${INDEXED_FIELDS.indexOf('status')} = 'expired' WHERE collection = ? AND id = ?`)
    .run(COLLECTIONS.checkoutSessions, session.id);
  // Alice's other session's tenant column made Bob's: Bob's verify narrows by that column.
  const movedColumn = db
    .prepare(`UPDATE documents SET k${INDEXED_FIELDS.indexOf('organizationId')} = ? WHERE collection = ? AND id = ?`)
    .run(bob.organizationId, COLLECTIONS.checkoutSessions, moved.id);
  db.close();
  t.is(edited.changes, 1);
  t.is(movedColumn.changes, 1);

  const second = await startTestWeir(t, { dataDir }, { clock: createManualClock(clock.now()) });
  const api = apiClient(second.url, alice.testSecretKey);
  t.false((await listedOpen(api)).includes(session.id), 'the list reads the edited column');
  const verified = await api.get<Verification>('/api/v1/audit/verify');
  t.is(verified.status, 200);
  t.false(verified.body.holds);
  t.true(verified.body.chain.holds);
  t.false(verified.body.readModels.holds);
  const byId = (a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id);
  t.deepEqual(
    verified.body.readModels.differences.sort(byId),
    [
      { collection: COLLECTIONS.checkoutSessions, id: session.id, kind: 'misindexed', fields: ['status'] },
      { collection: COLLECTIONS.checkoutSessions, id: moved.id, kind: 'misindexed', fields: ['organizationId'] },
    ].sort(byId),
  );
  const bobs = await apiClient(second.url, bob.testSecretKey).get<Verification>('/api/v1/audit/verify');
  t.is(bobs.status, 200);
  t.true(bobs.body.readModels.holds, JSON.stringify(bobs.body.readModels.differences));
});
