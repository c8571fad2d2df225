import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { MongoClient } from 'mongodb';
import { createEmbeddedReadStore } from './embedded-read-store.ts';
import { createMongoReadStore } from './mongodb-read-store.ts';
import { readStoreContract } from './read-store.contract.ts';
import { createSqliteReadStore } from './sqlite-read-store.ts';

readStoreContract(test, 'embedded', async () => ({
  store: createEmbeddedReadStore(),
  cleanup: async () => {},
}));

// The same contract with the equality indexes on: results must not change.
readStoreContract(test, 'embedded with indexes', async () => ({
  store: createEmbeddedReadStore({ indexedFields: ['organizationId', 'status', 'metadata.orderId', 'tags', 'fee'] }),
  cleanup: async () => {},
}));

// The embedded store `weir serve` uses: kept in a SQLite file (here one per test).
const scratch = mkdtempSync(join(tmpdir(), 'weir-read-store-contract-'));
test.after.always(() => rmSync(scratch, { recursive: true, force: true }));
let files = 0;
readStoreContract(test, 'sqlite', async () => {
  const store = createSqliteReadStore({ path: join(scratch, `${++files}.sqlite3`) });
  return { store, cleanup: () => store.close() };
});
readStoreContract(test, 'sqlite with indexes', async () => {
  const store = createSqliteReadStore({
    path: join(scratch, `${++files}.sqlite3`),
    indexedFields: ['organizationId', 'status', 'metadata.orderId', 'tags', 'fee'],
    orderedFields: ['createdAt', 'fee', 'amount'],
    compoundIndex: ['organizationId', 'status'],
  });
  return { store, cleanup: () => store.close() };
});

const mongoDbUrl = process.env['MONGODB_URL'];
if (mongoDbUrl) {
  // One database per store (dropAll is part of the contract), all named after this run.
  const run = `weir_rs_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  let stores = 0;
  readStoreContract(test, 'mongodb', async () => {
    const databaseName = `${run}_${++stores}`;
    const store = await createMongoReadStore({ url: mongoDbUrl, databaseName });
    return {
      store,
      cleanup: async () => {
        await store.close();
        await dropDatabase(mongoDbUrl, databaseName);
      },
    };
  });

  // The same contract with indexes on, and the indexes themselves: there before a collection's
  // first use, there again after dropAll (which drops them with the collections).
  readStoreContract(test, 'mongodb with indexes', async () => {
    const databaseName = `${run}_${++stores}`;
    const store = await createMongoReadStore({
      url: mongoDbUrl,
      databaseName,
      indexedFields: ['organizationId', 'status', 'metadata.orderId'],
    });
    return {
      store,
      cleanup: async () => {
        await store.close();
        await dropDatabase(mongoDbUrl, databaseName);
      },
    };
  });

  test('mongodb: every collection gets its indexes before its first use, and again after dropAll', async (t) => {
    const databaseName = `${run}_${++stores}`;
    const store = await createMongoReadStore({
      url: mongoDbUrl,
      databaseName,
      indexedFields: ['organizationId', 'status'],
    });
    t.teardown(async () => {
      await store.close();
      await dropDatabase(mongoDbUrl, databaseName);
    });
    const indexNames = async (collection: string) => {
      const client = new MongoClient(mongoDbUrl);
      try {
        return (await client.db(databaseName).collection(collection).indexes()).map((index) => index.name).sort();
      } finally {
        await client.close();
      }
    };
    await store.collection('things').put({ _id: 'a', organizationId: 'org', status: 'open' });
    t.deepEqual(await indexNames('things'), ['_id_', 'weir_organizationId', 'weir_status']);
    await store.dropAll();
    t.deepEqual(await store.collection('things').find({ organizationId: 'org' }), []);
    t.deepEqual(await indexNames('things'), ['_id_', 'weir_organizationId', 'weir_status']);
  });
} else {
  console.log('MONGODB_URL is not set: skipping the MongoDB read store contract.');
}

async function dropDatabase(url: string, databaseName: string): Promise<void> {
  const client = new MongoClient(url);
  try {
    await client.db(databaseName).dropDatabase();
  } finally {
    await client.close();
  }
}
