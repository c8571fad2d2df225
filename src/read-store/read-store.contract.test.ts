import { randomBytes } from 'node:crypto';
import test from 'ava';
import { MongoClient } from 'mongodb';
import { createEmbeddedReadStore } from './embedded-read-store.ts';
import { createMongoReadStore } from './mongodb-read-store.ts';
import { readStoreContract } from './read-store.contract.ts';

readStoreContract(test, 'embedded', async () => ({
  store: createEmbeddedReadStore(),
  cleanup: async () => {},
}));

// The same contract with the equality indexes on: results must not change.
readStoreContract(test, 'embedded with indexes', async () => ({
  store: createEmbeddedReadStore({ indexedFields: ['organizationId', 'status', 'metadata.orderId', 'tags', 'fee'] }),
  cleanup: async () => {},
}));

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
        const client = new MongoClient(mongoDbUrl);
        try {
          await client.db(databaseName).dropDatabase();
        } finally {
          await client.close();
        }
      },
    };
  });
} else {
  console.log('MONGODB_URL is not set: skipping the MongoDB read store contract.');
}
