import Router from '@koa/router';
import type { RailNetwork } from '../../chain-ingest/rail.ts';
import { networkIconUrl } from '../../hosted/icons.ts';
import { NotFoundError } from '../../shared/errors.ts';
import type { AssetRef } from '../../../machines/checkout-session.types.ts';
import { arrayPage, idsFilter } from '../array-page.ts';
import type { ApiDeps, ApiState } from '../api-context.ts';

/** The explorer's name, or its host when the network definition gives none. */
function explorerName(n: RailNetwork): string {
  if (n.explorerName) return n.explorerName;
  try {
    return new URL(n.explorerTxUrl.replace('{hash}', '0')).hostname;
  } catch {
    return n.explorerTxUrl;
  }
}

/**
 * An asset as the reference shows it. Weir never takes EIP-5827 allowances (it pays by transfer
 * to a deposit address), and every asset it offers is offered to every merchant.
 */
export const presentAsset = (asset: AssetRef) => ({ ...asset, isEIP5827Supported: false, isPublic: true });

/**
 * A network as the reference shows it. Weir watches every network it offers (`hasMonitoring`),
 * offers none as a beta, and offers each to every merchant of the environment (`isPublic`).
 */
export const presentChain = (n: RailNetwork, publicUrl: string) => ({
  id: n.chainId,
  name: n.name,
  icon: `${publicUrl}${networkIconUrl(n.network, n.chainId)}`,
  network: n.network,
  type: n.kind,
  currency: n.nativeCurrency.symbol.toLowerCase(),
  blockExplorerTransactionUrl: n.explorerTxUrl,
  blockExplorerName: explorerName(n),
  isTestnet: n.environment === 'test',
  isBeta: false,
  isEIP1559Supported: n.kind === 'evm',
  hasMonitoring: true,
  isPublic: true,
  assets: n.assets.map(presentAsset),
});

/**
 * Networks and assets offered to the key's environment (test keys: testnets; live keys: mainnets),
 * as pages with the reference's `page`, `limit` and `ids`; its `createdAt` bounds do not apply (a
 * network is configured, not created).
 */
export function chainRoutes(deps: ApiDeps): Router<ApiState> {
  const router = new Router<ApiState>({ prefix: '/api/v1' });
  const networks = (env: 'test' | 'live') => deps.rail.networks(env);
  router.get('/chains', (ctx) => {
    const ids = idsFilter(ctx);
    const offered = networks(ctx.state.tenant.environment).filter((n) => !ids || ids.has(String(n.chainId)));
    ctx.body = arrayPage(
      ctx,
      offered.map((n) => presentChain(n, deps.publicUrl)),
    );
  });
  router.get('/chains/:id', (ctx) => {
    const found = networks(ctx.state.tenant.environment).find((n) => String(n.chainId) === ctx.params.id);
    if (!found) throw new NotFoundError('chain', ctx.params.id!);
    ctx.body = presentChain(found, deps.publicUrl);
  });
  router.get('/assets', (ctx) => {
    const ids = idsFilter(ctx);
    const offered = networks(ctx.state.tenant.environment).flatMap((n) => n.assets);
    ctx.body = arrayPage(ctx, offered.filter((a) => !ids || ids.has(a.id)).map(presentAsset));
  });
  router.get('/assets/:id', (ctx) => {
    const found = networks(ctx.state.tenant.environment)
      .flatMap((n) => n.assets)
      .find((a) => a.id === ctx.params.id);
    if (!found) throw new NotFoundError('asset', ctx.params.id!);
    ctx.body = presentAsset(found);
  });
  return router;
}
