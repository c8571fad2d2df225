import Router from '@koa/router';
import { getAddress } from 'viem';
import type { DevnetInfo } from '../../chain-ingest/evm/devnet/devnet-info.ts';
import { faucetAssets, fundFromFaucet, type FaucetAsset } from '../../chain-ingest/evm/devnet/faucet.ts';
import { ForbiddenError, ValidationError } from '../../shared/errors.ts';
import { EVM_ADDRESS } from '../../shared/evm-address.ts';
import { toChainUnits, AmountError } from '../../shared/money.ts';
import type { ApiState } from '../api-context.ts';
import {
  amount,
  amountString,
  bodyObject,
  invalidFields,
  oneOf,
  optional,
  requiredText,
  withCode,
  z,
} from '../schema/fields.ts';
import { schemaRoutes } from '../schema/route.ts';

const DECIMALS: Record<FaucetAsset, number> = { eth: 18, usdc: 6, usdt: 6, dai: 18 };
const MAX_FAUCET_AMOUNT = 10_000n * 10n ** 8n;

const FaucetRequest = bodyObject({
  address: requiredText({ pattern: EVM_ADDRESS, hint: 'must be an EVM address (0x and 40 hex digits)' }),
  asset: optional(oneOf(faucetAssets)),
  amount: amount()
    .refine(
      (v) => v > 0n && v <= MAX_FAUCET_AMOUNT,
      withCode('must be between 1 and 10000 tokens (10^8-scaled: 1 to 1000000000000)'),
    )
    .optional(),
}).openapi('FaucetRequest', { example: { address: '0x52908400098527886e0f7030069857d2e4169ee7', asset: 'usdc' } });

const FaucetAnswer = z
  .object({
    transactionHash: z.string(),
    address: z.string(),
    asset: z.enum(faucetAssets),
    amount: amountString(),
    amountRaw: z.string().openapi({ description: "In the token's own units" }),
    chainId: z.number().int(),
  })
  .openapi('FaucetAnswer');

/**
 * `POST /api/v1/faucet {address, asset, amount}`: test tokens on the devnet for test keys. A live
 * key is refused with 403. `amount` is 10^8-scaled like every API amount (default 100 tokens).
 */
export function faucetRoutes(deps: { devnet: DevnetInfo | null }): Router<ApiState> {
  const router = new Router<ApiState>({ prefix: '/api/v1/faucet' });
  const api = schemaRoutes(router, { tag: 'Faucet', auth: 'secretKey' });
  api.route(
    {
      method: 'post',
      path: '/',
      summary: 'Fund a wallet with test tokens',
      description: 'On the local chain or devnet, for test keys only. `amount` is 10^8-scaled (default 100 tokens).',
      // A live key, or a server without a chain, is answered before the body is read.
      before: (ctx) => {
        if (ctx.state.tenant.environment !== 'test')
          throw new ForbiddenError(
            'the faucet gives test tokens only; use a test key (sk_test_…)',
            'testmode_charges_only',
          );
        if (!deps.devnet)
          throw new ValidationError(
            null,
            'no faucet on this server: start Weir with its local chain (WEIR_LOCAL_CHAIN=on, the default) or with --devnet FILE',
            'faucet_unavailable',
          );
      },
      body: FaucetRequest,
      response: FaucetAnswer,
      errors: [
        invalidFields('parameter_invalid_integer', 'faucet_unavailable'),
        { status: 403, codes: ['testmode_charges_only'], description: 'A live key' },
      ],
    },
    async (_ctx, { body }) => {
      const devnet = deps.devnet!;
      const asset = body.asset ?? 'usdc';
      const amount = body.amount ?? 100n * 10n ** 8n;
      let units: bigint;
      try {
        units = toChainUnits(amount, DECIMALS[asset]);
      } catch (error) {
        if (error instanceof AmountError) throw new ValidationError('amount', error.message);
        throw error;
      }
      const address = getAddress(body.address);
      const transactionHash = await fundFromFaucet(devnet, { to: address, asset, amount: units });
      return {
        transactionHash,
        address,
        asset,
        amount: amount.toString(),
        amountRaw: units.toString(),
        chainId: devnet.chainId,
      };
    },
  );
  return router;
}
