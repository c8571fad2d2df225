import test from 'ava';
import { createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';
import { assertError, type Page } from './helpers.ts';

type Asset = { id: string; chainId: number; currency: string; isEIP5827Supported: boolean; isPublic: boolean };
type Chain = {
  id: number;
  icon: string;
  blockExplorerTransactionUrl: string | null;
  blockExplorerName: string;
  isBeta: boolean;
  isEIP1559Supported: boolean;
  hasMonitoring: boolean;
  isPublic: boolean;
  assets: Asset[];
};

test('chains and assets are pages that honour limit and page; a chain has its icon and the reference flags', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const chains = await api.get<Page<Chain>>('/api/v1/chains');
  t.is(chains.status, 200);
  t.like(chains.body, { page: 1, limit: 200, hasMore: false });
  t.is(chains.body.count, chains.body.data.length);
  const chain = chains.body.data.find((c) => c.id === 7357)!;
  t.like(chain, { isBeta: false, isEIP1559Supported: true, hasMonitoring: true, isPublic: true });
  // A local chain (the test network) has no explorer: no URL, not its placeholder http://127.0.0.1/tx/{hash};
  // its name is a string, as the reference types it, that says so.
  t.like(chain, { blockExplorerTransactionUrl: null, blockExplorerName: 'No explorer' });
  // The icon is the hosted page's own bundled image, served by this Weir.
  t.true(chain.icon.startsWith(`${weir.url}/assets/icon-`), chain.icon);
  const icon = await fetch(chain.icon);
  t.is(icon.status, 200);
  t.regex(icon.headers.get('content-type') ?? '', /^image\/svg\+xml/);
  t.deepEqual((await api.get<Chain>('/api/v1/chains/7357')).body, chain);
  // A session's assets name their chain as GET /chains/{id} does (without its assets): no explorer there either.
  const session = await api.post<{ addresses: { asset: { chain: unknown } }[] }>(
    '/api/v1/checkout/sessions',
    sessionRequest(),
  );
  const { assets: _assets, ...slim } = chain;
  t.deepEqual(session.body.addresses[0]?.asset.chain, slim);

  const assets = await api.get<Page<Asset>>('/api/v1/assets');
  t.true(assets.body.count >= 2);
  t.true(assets.body.data.every((a) => a.isEIP5827Supported === false && a.isPublic === true));
  const first = await api.get<Page<Asset>>('/api/v1/assets?limit=1');
  t.like(first.body, { page: 1, limit: 1, count: assets.body.count, hasMore: true });
  t.deepEqual(first.body.data, assets.body.data.slice(0, 1));
  const second = await api.get<Page<Asset>>('/api/v1/assets?limit=1&page=2');
  t.deepEqual(second.body.data, assets.body.data.slice(1, 2));
  t.deepEqual((await api.get<Asset>(`/api/v1/assets/${first.body.data[0]!.id}`)).body, first.body.data[0]);
  const picked = await api.get<Page<Asset>>(`/api/v1/assets?ids=${assets.body.data[1]!.id},nope`);
  t.deepEqual(picked.body.data, [assets.body.data[1]]);
  t.deepEqual((await api.get<Page<Chain>>('/api/v1/chains?ids=7357')).body.data, [chain]);
  t.is((await api.get<Page<Chain>>('/api/v1/chains?ids=1')).body.count, 0);
  assertError(t, await api.get('/api/v1/chains?limit=0'), 400, { field: 'limit' });
  assertError(t, await api.get('/api/v1/assets?limit=201'), 400, { field: 'limit' });
});
