import test from 'ava';
import { deterministicId, isUuid } from './ids.ts';

test('deterministicId is the RFC 9562 v5 uuid of the name in the namespace', (t) => {
  // RFC 9562, appendix A.4: the DNS namespace and "www.example.com".
  t.is(
    deterministicId('www.example.com', '6ba7b810-9dad-11d1-80b4-00c04fd430c8'),
    '2ed6657d-e927-568b-95e1-2665a8aea6a2',
  );
});

test('deterministicId keeps the ids already in logs and read models (Weir namespace, UTF-8 names)', (t) => {
  t.is(
    deterministicId('webhook-event:31273212-71db-485b-9c96-167c1bba4ac9:checkout_session.completed'),
    '4f29adb8-f19d-50f3-923c-c0164169293b',
  );
  t.is(deterministicId('webhook-delivery:é ü 日本:x'), '23ff77d6-72ef-5185-907e-43497b8eaa41');
  t.true(isUuid(deterministicId('')));
});

test('deterministicId gives the same id whatever was hashed before (other namespaces, longer names)', (t) => {
  const long = `webhook-event:${'é'.repeat(300)}`;
  const expected = [
    deterministicId('www.example.com', '6ba7b810-9dad-11d1-80b4-00c04fd430c8'),
    deterministicId(long),
    deterministicId('short'),
  ];
  t.deepEqual(
    [
      deterministicId('www.example.com', '6ba7b810-9dad-11d1-80b4-00c04fd430c8'),
      deterministicId(long),
      deterministicId('short'),
    ],
    expected,
  );
  t.deepEqual(
    [
      deterministicId('short'),
      deterministicId(long),
      deterministicId('www.example.com', '6ba7b810-9dad-11d1-80b4-00c04fd430c8'),
    ],
    [expected[2], expected[1], expected[0]],
  );
  t.is(expected[0], '2ed6657d-e927-568b-95e1-2665a8aea6a2');
});
