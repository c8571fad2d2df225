import Router from '@koa/router';
import { NotFoundError } from '../../shared/errors.ts';
import type { RailNetwork } from '../../chain-ingest/rail.ts';
import type { ApiDeps, ApiState } from '../api-context.ts';

const presentChain = (n: RailNetwork) => ({
  id: n.chainId,
  name: n.name,
  network: n.network,
  type: n.kind,
  currency: n.nativeCurrency.symbol.toLowerCase(),
  blockExplorerTransactionUrl: n.explorerTxUrl,
  isTestnet: n.environment === 'test',
  assets: n.assets,
});

/** Networks and assets offered to the key's environment (test keys: testnets; live keys: mainnets). */
export function chainRoutes(deps: ApiDeps): Router<ApiState> {
  const router = new Router<ApiState>({ prefix: '/api/v1' });
  const networks = (env: 'test' | 'live') => deps.rail.networks(env);
  router.get('/chains', (ctx) => {
    ctx.body = networks(ctx.state.tenant.environment).map(presentChain);
  });
  router.get('/chains/:id', (ctx) => {
    const found = networks(ctx.state.tenant.environment).find((n) => String(n.chainId) === ctx.params.id);
    if (!found) throw new NotFoundError('chain', ctx.params.id!);
    ctx.body = presentChain(found);
  });
  router.get('/assets', (ctx) => {
    ctx.body = networks(ctx.state.tenant.environment).flatMap((n) => n.assets);
  });
  router.get('/assets/:id', (ctx) => {
    const found = networks(ctx.state.tenant.environment)
      .flatMap((n) => n.assets)
      .find((a) => a.id === ctx.params.id);
    if (!found) throw new NotFoundError('asset', ctx.params.id!);
    ctx.body = found;
  });
  return router;
}
