import Router from '@koa/router';
import { explorerTemplateOf } from '../../chain-ingest/network-definition.ts';
import type { RailNetwork } from '../../chain-ingest/rail.ts';
import { networkIconUrl } from '../../hosted/icons.ts';
import { NotFoundError } from '../../shared/errors.ts';
import { shownAddress } from '../../shared/evm-address.ts';
import type { AssetRef } from '../../../machines/checkout-session.types.ts';
import type { Environment } from '../../event-store/event-store.ts';
import { arrayPage, idsFilter } from '../array-page.ts';
import type { ApiDeps, ApiState } from '../api-context.ts';
import { arrayListQuery, AssetSchema, ChainSchema } from '../schema/chain.ts';
import { idParams, invalidFields, listOf, notFound, z } from '../schema/fields.ts';
import { schemaRoutes } from '../schema/route.ts';

/** What a chain without an explorer (a local chain) names as its explorer: a string, as the reference types it. */
const NO_EXPLORER = 'No explorer';

/** The explorer's name, or its host when the network definition gives none; NO_EXPLORER when there is no explorer. */
function explorerName(n: RailNetwork, template: string | null): string {
  if (template === null) return NO_EXPLORER;
  if (n.explorerName) return n.explorerName;
  try {
    return new URL(template.replace('{hash}', '0')).hostname;
  } catch {
    return template;
  }
}

/**
 * An asset as the reference shows it. Weir never takes EIP-5827 allowances (it pays by transfer
 * to a deposit address), and every asset it offers is offered to every merchant.
 */
export const presentAsset = (asset: AssetRef) => ({
  ...asset,
  address: shownAddress(asset.address),
  isEIP5827Supported: false,
  isPublic: true,
});

/**
 * A network as the reference shows it. Weir watches every network it offers (`hasMonitoring`),
 * offers none as a beta, and offers each to every merchant of the environment (`isPublic`). A
 * local chain has no explorer: its explorer URL is null, not a placeholder that leads nowhere, and
 * its explorer's name says there is none.
 */
export const presentChain = (n: RailNetwork, publicUrl: string) => {
  const template = explorerTemplateOf(n);
  return {
    id: n.chainId,
    name: n.name,
    icon: `${publicUrl}${networkIconUrl(n.network, n.chainId)}`,
    network: n.network,
    type: n.kind,
    currency: n.nativeCurrency.symbol.toLowerCase(),
    blockExplorerTransactionUrl: template,
    blockExplorerName: explorerName(n, template),
    isTestnet: n.environment === 'test',
    isBeta: false,
    isEIP1559Supported: n.kind === 'evm',
    hasMonitoring: true,
    isPublic: true,
    assets: n.assets.map(presentAsset),
  };
};

/**
 * An asset with its flags and its network as `GET /chains/{id}` shows it without its asset list
 * (null for a network no longer offered); the networks are built once per environment.
 */
export function assetWithChainPresenter(deps: Pick<ApiDeps, 'rail' | 'publicUrl'>) {
  const chainsOf = new Map<Environment, Map<number, unknown>>();
  const chainOf = (environment: Environment, chainId: number) => {
    let chains = chainsOf.get(environment);
    if (!chains) {
      chains = new Map(
        deps.rail.networks(environment).map((n) => {
          const { assets: _assets, ...chain } = presentChain(n, deps.publicUrl);
          return [n.chainId, chain] as const;
        }),
      );
      chainsOf.set(environment, chains);
    }
    return chains.get(chainId) ?? null;
  };
  return (environment: Environment, asset: AssetRef) => ({
    ...presentAsset(asset),
    chain: chainOf(environment, asset.chainId),
  });
}

/**
 * Networks and assets offered to the key's environment (test keys: testnets; live keys: mainnets),
 * as pages with the reference's `page`, `limit` and `ids`; its `createdAt` bounds do not apply (a
 * network is configured, not created).
 */
export function chainRoutes(deps: ApiDeps): Router<ApiState> {
  const router = new Router<ApiState>({ prefix: '/api/v1' });
  const networks = (env: 'test' | 'live') => deps.rail.networks(env);
  const api = schemaRoutes(router, { tag: 'Chains', auth: 'secretKey' });
  const pageErrors = [invalidFields()];

  api.route(
    {
      method: 'get',
      path: '/chains',
      summary: 'List networks',
      description: "The networks offered to the key's environment (test keys: testnets; live keys: mainnets).",
      query: arrayListQuery,
      response: listOf(ChainSchema),
      errors: pageErrors,
    },
    (ctx) => {
      const ids = idsFilter(ctx);
      const offered = networks(ctx.state.tenant.environment).filter((n) => !ids || ids.has(String(n.chainId)));
      return arrayPage(
        ctx,
        offered.map((n) => presentChain(n, deps.publicUrl)),
      );
    },
  );

  api.route(
    {
      method: 'get',
      path: '/chains/:id',
      summary: 'Read a network',
      params: z.object({ id: z.string().openapi({ description: 'The chain id', example: '11155111' }) }),
      response: ChainSchema,
      errors: [notFound('chain')],
    },
    (ctx, { params: { id } }) => {
      const found = networks(ctx.state.tenant.environment).find((n) => String(n.chainId) === id);
      if (!found) throw new NotFoundError('chain', id);
      return presentChain(found, deps.publicUrl);
    },
  );

  api.route(
    {
      method: 'get',
      path: '/assets',
      tag: 'Assets',
      summary: 'List assets',
      description: "Every asset of the networks offered to the key's environment.",
      query: arrayListQuery,
      response: listOf(AssetSchema),
      errors: pageErrors,
    },
    (ctx) => {
      const ids = idsFilter(ctx);
      const offered = networks(ctx.state.tenant.environment).flatMap((n) => n.assets);
      return arrayPage(ctx, offered.filter((a) => !ids || ids.has(a.id)).map(presentAsset));
    },
  );

  api.route(
    {
      method: 'get',
      path: '/assets/:id',
      tag: 'Assets',
      summary: 'Read an asset',
      params: idParams('asset'),
      response: AssetSchema,
      errors: [notFound('asset')],
    },
    (ctx, { params: { id } }) => {
      const found = networks(ctx.state.tenant.environment)
        .flatMap((n) => n.assets)
        .find((a) => a.id === id);
      if (!found) throw new NotFoundError('asset', id);
      return presentAsset(found);
    },
  );
  return router;
}
