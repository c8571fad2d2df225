import test from 'ava';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInMemoryCheckpointStore, type EvmFollowerCheckpoint } from './checkpoint.ts';
import { checkpointFilePath, createFileCheckpointStore } from './file-checkpoint-store.ts';

const hash = (n: number): string => `0x${n.toString(16).padStart(64, '0')}`;

const checkpoint: EvmFollowerCheckpoint = {
  version: 1,
  network: 'base-sepolia',
  chainId: 84532,
  nextBlock: 12,
  lastProcessed: { number: 11, hash: hash(11) },
  window: [
    { number: 10, hash: hash(10), parentHash: hash(9), transfers: true, finalPublished: true },
    { number: 11, hash: hash(11), parentHash: hash(10), transfers: false, finalPublished: false },
    { number: 12, hash: hash(12), parentHash: hash(11), transfers: true, finalPublished: false },
  ],
  orphanedHeights: [13],
  updatedAt: '2026-01-01T00:00:00.000Z',
};

async function temporaryDirectory(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'weir-checkpoints-'));
}

test('the file store returns undefined before the first write, then what was written (0600 in a 0700 folder, whatever the umask)', async (t) => {
  process.umask(0o022);
  const dir = join(await temporaryDirectory(), 'nested', 'dir');
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const store = createFileCheckpointStore(dir);
  t.is(await store.get('base-sepolia'), undefined);
  await store.set('base-sepolia', checkpoint);
  t.deepEqual(await store.get('base-sepolia'), checkpoint);
  t.deepEqual(JSON.parse(await readFile(checkpointFilePath(dir, 'base-sepolia'), 'utf8')), checkpoint);
  t.is((await stat(dir)).mode & 0o777, 0o700);
  t.is((await stat(checkpointFilePath(dir, 'base-sepolia'))).mode & 0o777, 0o600);
});

test('the file store replaces the file by rename and leaves no temporary file behind', async (t) => {
  const dir = await temporaryDirectory();
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const store = createFileCheckpointStore(dir);
  await store.set('base-sepolia', checkpoint);
  const next = { ...checkpoint, nextBlock: 13, lastProcessed: { number: 12, hash: hash(12) } };
  await Promise.all([
    store.set('base-sepolia', next),
    store.set('ethereum', { ...checkpoint, network: 'ethereum', chainId: 1 }),
  ]);
  t.deepEqual(await store.get('base-sepolia'), next);
  t.is((await store.get('ethereum'))?.chainId, 1);
  t.deepEqual((await readdir(dir)).sort(), ['base-sepolia.evm-follower.json', 'ethereum.evm-follower.json']);
});

test('a corrupt or foreign checkpoint file is refused with CheckpointStoreError saying what to do', async (t) => {
  const dir = await temporaryDirectory();
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const store = createFileCheckpointStore(dir);
  await writeFile(checkpointFilePath(dir, 'base-sepolia'), '{"version":1,');
  await t.throwsAsync(() => store.get('base-sepolia'), {
    name: 'CheckpointStoreError',
    message: /not valid JSON.*delete it/,
  });
  await writeFile(checkpointFilePath(dir, 'base-sepolia'), JSON.stringify({ ...checkpoint, network: 'ethereum' }));
  await t.throwsAsync(() => store.get('base-sepolia'), {
    name: 'CheckpointStoreError',
    message: /belongs to network "ethereum"/,
  });
  await writeFile(
    checkpointFilePath(dir, 'base-sepolia'),
    JSON.stringify({ ...checkpoint, window: [checkpoint.window[0], checkpoint.window[2]] }),
  );
  await t.throwsAsync(() => store.get('base-sepolia'), { name: 'CheckpointStoreError', message: /consecutive/ });
});

test('a network name that is not a safe file name is refused', (t) => {
  t.throws(() => checkpointFilePath('/tmp', '../etc/passwd'), { name: 'CheckpointStoreError' });
});

test('the in-memory store copies what it keeps and records the history', async (t) => {
  const store = createInMemoryCheckpointStore();
  const mine = structuredClone(checkpoint);
  await store.set('base-sepolia', mine);
  mine.nextBlock = 999;
  t.is((await store.get('base-sepolia'))?.nextBlock, 12);
  await store.set('base-sepolia', { ...checkpoint, nextBlock: 13, lastProcessed: { number: 12, hash: hash(12) } });
  t.deepEqual(
    store.history('base-sepolia').map((entry) => entry.nextBlock),
    [12, 13],
  );
  await t.throwsAsync(() => store.set('base-sepolia', { ...checkpoint, nextBlock: 20 }), {
    name: 'CheckpointStoreError',
    message: /last processed block 19/,
  });
});
