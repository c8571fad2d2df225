import { unsupportedQuery, z } from './fields.ts';

/** Answer schemas of networks and assets (the reference's chain and asset shapes). */

export const AssetSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    symbol: z.string(),
    currency: z.string(),
    chainId: z.number().int(),
    address: z.string().openapi({ description: 'Token contract, or the zero address / `native` for the coin' }),
    decimals: z.number().int(),
    isEIP5827Supported: z.boolean(),
    isPublic: z.boolean(),
  })
  .openapi('Asset');

/** A network's fields as the reference shows them, but its assets: what a session's asset names as its `chain`. */
export const chainFields = {
  id: z.number().int(),
  name: z.string(),
  icon: z.string(),
  network: z.string(),
  type: z.enum(['evm', 'solana', 'tron']),
  currency: z.string(),
  // Deliberate difference: the reference says string; a local chain has no explorer, and a
  // placeholder URL would be a dead link in every client that shows it.
  blockExplorerTransactionUrl: z.string().nullable().openapi({
    description:
      "The explorer's transaction URL, `{hash}` standing for the transaction hash as the API shows it (on Tron the bare 64-hex txID, as Tronscan takes it); null for a local chain (the devnet, a local Tron), which has no explorer (the reference always gives a string: Weir gives no placeholder that leads nowhere)",
    example: 'https://basescan.org/tx/{hash}',
  }),
  blockExplorerName: z.string().openapi({
    description:
      "The explorer's name; `No explorer` for a chain that has none (a local chain, whose `blockExplorerTransactionUrl` is null)",
    example: 'Basescan',
  }),
  isTestnet: z.boolean(),
  isBeta: z.boolean(),
  isEIP1559Supported: z.boolean(),
  hasMonitoring: z.boolean(),
  isPublic: z.boolean(),
};

export const ChainSchema = z.object({ ...chainFields, assets: z.array(AssetSchema) }).openapi('Chain');

/** `page`, `limit` and `ids` of the in-memory lists (checked by `arrayPage` itself; documented here). */
export const arrayListQuery = z.looseObject({
  page: z.string().optional().openapi({ description: 'Page number, from 1', example: '1' }),
  limit: z.string().optional().openapi({ description: 'Items per page, 1 to 200 (default 200)', example: '20' }),
  ids: z.string().optional().openapi({ description: 'Comma-separated ids (or repeated `ids`)' }),
  ...unsupportedQuery(
    ['isnull', 'notnull', 'gt', 'gte', 'lt', 'lte'].map((op) => `createdAt[${op}]`),
    "networks and assets are this Weir's configuration, not records made at a time: they have no createdAt",
  ),
});
