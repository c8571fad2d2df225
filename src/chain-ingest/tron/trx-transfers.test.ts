import test from 'ava';
import { createTronValueKinds } from './trx-transfers.ts';

const hash = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;

/** A node's `wallet/gettransactionbyid` that counts what it is asked: odd transactions are TRC-10 transfers. */
function countingNode() {
  const asked: string[] = [];
  const fetchImpl = (async (_url: string | URL | Request, init?: RequestInit) => {
    const id = (JSON.parse(String(init?.body)) as { value: string }).value;
    asked.push(id);
    const type = Number.parseInt(id, 16) % 2 === 1 ? 'TransferAssetContract' : 'TransferContract';
    return new Response(JSON.stringify({ raw_data: { contract: [{ type }] } }));
  }) as typeof fetch;
  return { asked, fetchImpl };
}

test('a transaction whose contract was read is not asked about again; the memory keeps the newest ones only', async (t) => {
  const node = countingNode();
  const kinds = createTronValueKinds(['http://node.test/jsonrpc'], node.fetchImpl, 3);
  t.deepEqual(await kinds.trxTransfers([hash(2), hash(3)]), new Set([hash(2)]));
  t.is(node.asked.length, 2);
  // The same batch read again (the solidified re-read, a recheck), with the hash spelt otherwise.
  t.deepEqual(await kinds.trxTransfers([hash(2), hash(3).toUpperCase().replace('0X', '')]), new Set([hash(2)]));
  t.deepEqual(await kinds.kindOf(hash(3)), { trx: false, contractType: 'TransferAssetContract' });
  t.is(node.asked.length, 2, 'nothing asked twice');

  // Bounded: reading 4 and 5 forgets the least recently used (2; 3 was just used).
  await kinds.trxTransfers([hash(4), hash(5)]);
  t.is(node.asked.length, 4);
  await kinds.kindOf(hash(3));
  t.is(node.asked.length, 4);
  await kinds.kindOf(hash(2));
  t.is(node.asked.length, 5, 'forgotten, so asked again');
});

test('a failed read is not remembered', async (t) => {
  let fail = true;
  let calls = 0;
  const fetchImpl = (async () => {
    calls += 1;
    if (fail) return new Response('busy', { status: 503 });
    return new Response(JSON.stringify({ raw_data: { contract: [{ type: 'TransferContract' }] } }));
  }) as typeof fetch;
  const kinds = createTronValueKinds(['http://node.test/jsonrpc'], fetchImpl);
  await t.throwsAsync(kinds.kindOf(hash(8)), { message: /HTTP 503/ });
  fail = false;
  t.deepEqual(await kinds.kindOf(hash(8)), { trx: true });
  await kinds.kindOf(hash(8));
  t.is(calls, 2);
});
