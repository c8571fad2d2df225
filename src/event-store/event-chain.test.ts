import { createHash } from 'node:crypto';
import test from 'ava';
import {
  GENESIS_HASH,
  chainHash,
  chainHashV1,
  contentDigest,
  contentOf,
  foldChain,
  isChainHash,
  linkAfter,
  linkHash,
  linkHashV1,
  newContentOf,
  tenantOf,
  tenantTag,
  type ChainContent,
} from './event-chain.ts';
import type { NewEvent } from './event-store.ts';

const content: ChainContent = {
  id: '0b5c6f1e-8d2a-4c1b-9e3f-2a7d5c8b1e4f',
  streamId: 'invoice-1',
  revision: 0,
  type: 'InvoiceCreated',
  data: '{"amount":"100"}',
  metadata: '{"organizationId":"org_1"}',
};

test("the hash is SHA-256 over the previous hash, the content's digest (SHA-256 of a JSON header, the data and the metadata text) and the tenant tag (SHA-256 of weir-tenant, the previous hash, the organization and the environment), newline-separated", (t) => {
  const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
  const digest = sha256(
    '["0b5c6f1e-8d2a-4c1b-9e3f-2a7d5c8b1e4f","invoice-1",0,"InvoiceCreated"]\n{"amount":"100"}\n{"organizationId":"org_1"}',
  );
  t.is(contentDigest(content), digest);
  // The metadata names no environment: its part of the tag is empty.
  const tag = sha256(`weir-tenant\n${GENESIS_HASH}\norg_1\n`);
  t.is(tenantTag(GENESIS_HASH, { organizationId: 'org_1', environment: '' }), tag);
  const expected = sha256(`${GENESIS_HASH}\n${digest}\n${tag}`);
  t.is(chainHash(GENESIS_HASH, content), expected);
  t.is(linkHash(GENESIS_HASH, digest, tag), expected);
  t.true(isChainHash(expected));
  // Pinned, so a change of the encoding (which would break every stored chain) cannot pass unseen.
  t.is(expected, '33e4f7ddd628ac727f9e535b9f7a55ad4735230208e041b1a0617c38d30348c2');
});

test('chain v1 (links written before the tenant tag, and the seal) hashes the previous hash and the digest only', (t) => {
  const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
  const expected = sha256(`${GENESIS_HASH}\n${contentDigest(content)}`);
  t.is(chainHashV1(GENESIS_HASH, content), expected);
  t.is(linkHashV1(GENESIS_HASH, contentDigest(content)), expected);
  t.is(expected, '6f63091db7be9e8ef3c93ae06c67c05e2020dbd57b40982599829df375d29edb');
  t.is(foldChain(GENESIS_HASH, [content]), expected);
});

test("the tenant tag is the metadata's organization and environment, salted with the previous hash", (t) => {
  const tenant = tenantOf({ organizationId: 'org_1', environment: 'live', actor: 'cli' });
  t.deepEqual(tenant, { organizationId: 'org_1', environment: 'live' });
  t.deepEqual(tenantOf({ organizationId: 3 }), { organizationId: '', environment: '' });
  t.not(tenantTag(GENESIS_HASH, tenant), tenantTag('f'.repeat(64), tenant));
  t.not(tenantTag(GENESIS_HASH, tenant), tenantTag(GENESIS_HASH, { ...tenant, environment: 'test' }));
});

test('every part of the content and the previous hash changes the hash', (t) => {
  const base = chainHash(GENESIS_HASH, content);
  const variants: ChainContent[] = [
    { ...content, id: `${content.id.slice(0, -1)}0` },
    { ...content, streamId: 'invoice-2' },
    { ...content, revision: 1 },
    { ...content, type: 'InvoiceSent' },
    { ...content, data: '{"amount":"101"}' },
    { ...content, metadata: '{"organizationId":"org_2"}' },
  ];
  for (const variant of variants) t.not(chainHash(GENESIS_HASH, variant), base);
  t.not(chainHash('f'.repeat(64), content), base);
});

test('moving text from one field to the next never gives the same hash', (t) => {
  // Without separators "ab"+"c" and "a"+"bc" would hash alike.
  const a = chainHash(GENESIS_HASH, { ...content, streamId: 'ab', type: 'c' });
  const b = chainHash(GENESIS_HASH, { ...content, streamId: 'a', type: 'bc' });
  t.not(a, b);
  const c = chainHash(GENESIS_HASH, { ...content, data: '{"a":1}', metadata: '{}' });
  const d = chainHash(GENESIS_HASH, { ...content, data: '{"a":1}\n{}', metadata: '' });
  t.not(c, d);
});

test("an append's link is the chain hash of its content, its tenant taken from the metadata object", (t) => {
  const contents = [content, { ...content, revision: 1, type: 'InvoiceSent' }, { ...content, revision: 2 }];
  let previous = GENESIS_HASH;
  let v1 = GENESIS_HASH;
  for (const each of contents) {
    const link = linkAfter(previous, each, tenantOf(JSON.parse(each.metadata)));
    t.is(link.previous, previous);
    t.is(link.hash, chainHash(previous, each));
    previous = link.hash;
    v1 = chainHashV1(v1, each);
  }
  // The seal of a log written before the chain folds v1 links.
  t.is(foldChain(GENESIS_HASH, contents), v1);
  t.is(foldChain(GENESIS_HASH, []), GENESIS_HASH);
});

test('what the writer hashes is what a reader recomputes from the event read back', (t) => {
  const event: NewEvent = {
    id: content.id,
    type: 'PaymentDetected',
    data: { amount: '1', memo: 'ünïcode “quotes” \\ and \n newline', nested: { list: [1, 2.5, null, true] } },
    metadata: {
      organizationId: 'org_1',
      environment: 'test',
      actor: 'system:matcher',
      correlationId: 'c',
      occurredAt: '2025-01-01T00:00:00.000Z',
    },
  };
  const written = newContentOf('checkout_session-1', 3, event);
  const readBack = JSON.parse(JSON.stringify({ ...event, streamId: 'checkout_session-1', revision: 3 })) as NewEvent & {
    streamId: string;
    revision: number;
  };
  t.deepEqual(contentOf(readBack), written);
});
