import { z } from './fields.ts';

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

export const ChainSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    icon: z.string(),
    network: z.string(),
    type: z.enum(['evm', 'solana', 'tron']),
    currency: z.string(),
    blockExplorerTransactionUrl: z.string(),
    blockExplorerName: z.string(),
    isTestnet: z.boolean(),
    isBeta: z.boolean(),
    isEIP1559Supported: z.boolean(),
    hasMonitoring: z.boolean(),
    isPublic: z.boolean(),
    assets: z.array(AssetSchema),
  })
  .openapi('Chain');

/** `page`, `limit` and `ids` of the in-memory lists (checked by `arrayPage` itself; documented here). */
export const arrayListQuery = z.looseObject({
  page: z.string().optional().openapi({ description: 'Page number, from 1', example: '1' }),
  limit: z.string().optional().openapi({ description: 'Items per page, 1 to 200 (default 200)', example: '20' }),
  ids: z.string().optional().openapi({ description: 'Comma-separated ids (or repeated `ids`)' }),
});
