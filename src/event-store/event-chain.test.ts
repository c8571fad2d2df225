import { createHash } from 'node:crypto';
import test from 'ava';
import {
  GENESIS_HASH,
  chainHash,
  contentDigest,
  contentOf,
  foldChain,
  isChainHash,
  linkAfter,
  linkHash,
  newContentOf,
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

test("the hash is SHA-256 over the previous hash and the content's digest (SHA-256 of a JSON header, the data and the metadata text), newline-separated", (t) => {
  const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
  const digest = sha256(
    '["0b5c6f1e-8d2a-4c1b-9e3f-2a7d5c8b1e4f","invoice-1",0,"InvoiceCreated"]\n{"amount":"100"}\n{"organizationId":"org_1"}',
  );
  t.is(contentDigest(content), digest);
  const expected = sha256(`${GENESIS_HASH}\n${digest}`);
  t.is(chainHash(GENESIS_HASH, content), expected);
  t.is(linkHash(GENESIS_HASH, digest), expected);
  t.true(isChainHash(expected));
  // Pinned, so a change of the encoding (which would break every stored chain) cannot pass unseen.
  t.is(expected, '6f63091db7be9e8ef3c93ae06c67c05e2020dbd57b40982599829df375d29edb');
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

test('a fold is the chain of links one after another', (t) => {
  const contents = [content, { ...content, revision: 1, type: 'InvoiceSent' }, { ...content, revision: 2 }];
  let previous = GENESIS_HASH;
  for (const each of contents) {
    const link = linkAfter(previous, each);
    t.is(link.previous, previous);
    previous = link.hash;
  }
  t.is(foldChain(GENESIS_HASH, contents), previous);
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
