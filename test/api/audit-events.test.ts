import test from 'ava';
import { chainHash } from '../../src/event-store/event-chain.ts';
import { apiClient } from '../support/api-client.ts';
import { createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';
import { assertError } from './helpers.ts';

type LoggedEvent = {
  position: string;
  id: string;
  streamId: string;
  revision: number;
  type: string;
  data: string;
  metadata: string;
  previous: string | null;
  hash: string | null;
};
type Page = { data: LoggedEvent[]; nextAfter: string | null; hasMore: boolean };

test("GET /events: an auditor's key reads its tenant's events alone, in log order, each hash recomputable; pages continue from nextAfter; NDJSON streams the same; a read key is refused", async (t) => {
  const weir = await startTestWeir(t);
  const shop = await createMerchant(weir.url, 'Shop');
  const other = await createMerchant(weir.url, 'Other');
  for (const api of [shop.api, other.api, shop.api])
    t.is((await api.post('/api/v1/checkout/sessions', sessionRequest())).status, 200);
  const key = await shop.api.post<{ secretKey: string }>('/api/v1/api-keys', { name: 'auditor', scope: 'audit' });
  t.is(key.status, 200, JSON.stringify(key.body));
  const auditor = apiClient(weir.url, key.body.secretKey);

  const all = (await auditor.get<Page>('/api/v1/events?limit=1000')).body;
  t.false(all.hasMore);
  t.true(all.data.length >= 4, 'the organization, its keys, its wallet and its two sessions');
  const positions = all.data.map((e) => BigInt(e.position));
  t.deepEqual(
    positions,
    [...positions].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
  );
  for (const e of all.data) {
    const metadata = JSON.parse(e.metadata) as { organizationId: string; environment: string };
    t.is(metadata.organizationId, shop.organizationId);
    t.is(metadata.environment, 'test');
    t.is(
      e.hash,
      chainHash(e.previous!, {
        id: e.id,
        streamId: e.streamId,
        revision: e.revision,
        type: e.type,
        data: e.data,
        metadata: e.metadata,
      }),
    );
  }
  t.is(all.data.filter((e) => e.type === 'CheckoutSessionCreated').length, 2);

  // Two at a time, from nextAfter: the same events.
  const paged: LoggedEvent[] = [];
  let after: string | null = null;
  for (let pages = 0; pages < 50; pages++) {
    const page: Page = (await auditor.get<Page>(`/api/v1/events?limit=2${after ? `&after=${after}` : ''}`)).body;
    paged.push(...page.data);
    after = page.nextAfter;
    if (!page.hasMore) break;
  }
  t.deepEqual(
    paged.map((e) => e.id),
    all.data.map((e) => e.id),
  );

  const ndjson = await fetch(`${weir.url}/api/v1/events?format=ndjson`, {
    headers: { authorization: `Bearer ${key.body.secretKey}` },
  });
  t.regex(ndjson.headers.get('content-type') ?? '', /^application\/x-ndjson/);
  const lines = (await ndjson.text())
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as LoggedEvent);
  t.deepEqual(lines, all.data);

  const read = await shop.api.post<{ secretKey: string }>('/api/v1/api-keys', { name: 'analyst', scope: 'read' });
  assertError(t, await apiClient(weir.url, read.body.secretKey).get('/api/v1/events'), 403, { code: 'api_key_scope' });
  assertError(t, await auditor.get('/api/v1/events?after=-1'), 400, { field: 'after' });
  assertError(t, await auditor.get('/api/v1/events?limit=0'), 400, { field: 'limit' });
});
