import Router from '@koa/router';
import type { PayTransactionBuilder } from '../../chain-ingest/solana/pay-transaction.ts';
import { isSolanaAddress } from '../../hosted/solana-pay.ts';
import { remainingChainUnits } from '../../hosted/wallet-actions.ts';
import { COLLECTIONS, type CheckoutSessionDoc } from '../../projections/collections.ts';
import { ConflictError, ForbiddenError, NotFoundError, UpstreamError, ValidationError } from '../../shared/errors.ts';
import { isUuid } from '../../shared/ids.ts';
import type { ApiDeps, ApiState } from '../api-context.ts';
import { idParams, invalidFields } from '../schema/fields.ts';
import { hostedNotFound, SolanaPayTransactionAnswer, SolanaPayTransactionRequest } from '../schema/hosted.ts';
import { schemaRoutes } from '../schema/route.ts';

/**
 * `POST /checkout/{id}/solana-transaction {assetId, account}`: the hosted page's "Pay with a Solana
 * wallet". Answers the unsigned Solana Pay transfer of what is still due in the chosen Solana asset,
 * from `account`, for the page to hand to the wallet (Wallet Standard `solana:signAndSendTransaction`).
 */
export function hostedSolanaWalletRoutes(
  deps: Pick<ApiDeps, 'readStore' | 'clock'> & { solanaPay?: PayTransactionBuilder },
): Router<ApiState> {
  const router = new Router<ApiState>({ prefix: '/checkout' });
  const sessions = deps.readStore.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions);
  schemaRoutes(router, { tag: 'Hosted checkout', auth: 'public' }).route(
    {
      method: 'post',
      path: '/:id/solana-transaction',
      summary: 'Build the transfer a Solana wallet signs',
      description:
        'The unsigned Solana Pay transfer (base64, version 0) of what is still due in the chosen Solana asset, from `account` to the merchant wallet with the session reference, and the Wallet Standard chain to sign it for.',
      params: idParams('checkout session'),
      body: SolanaPayTransactionRequest,
      response: SolanaPayTransactionAnswer,
      errors: [
        invalidFields('incorrect_address'),
        { status: 403, codes: ['session_not_open'], description: 'The session is over' },
        hostedNotFound('checkout session'),
        { status: 409, codes: ['nothing_due'], description: 'Nothing is left to pay' },
        { status: 502, codes: ['chain_unavailable'], description: 'The network did not answer' },
      ],
    },
    async (_ctx, { params: { id }, body: { assetId, account } }) => {
      const session = isUuid(id) ? await sessions.get(id) : null;
      if (!session) throw new NotFoundError('checkout session', id);
      if (session.status !== 'open' && session.status !== 'incomplete')
        throw new ForbiddenError(
          `this checkout session is ${session.status}: there is nothing to pay`,
          'session_not_open',
        );
      // A partly paid (incomplete) session never expires: it waits for the rest, whatever expiresAt says.
      if (session.status === 'open' && Date.parse(session.expiresAt) <= deps.clock.now())
        throw new ForbiddenError('this checkout session has expired: there is nothing to pay', 'session_not_open');
      const address = session.addresses.find((a) => a.id === assetId || a.asset.id === assetId);
      if (!address) throw new ValidationError('assetId', 'is not offered by this checkout session');
      if (!isSolanaAddress(address) || !deps.solanaPay)
        throw new ValidationError(
          'assetId',
          `${address.asset.symbol} on ${address.network} is not paid from a Solana wallet`,
        );
      if (!/^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(account))
        throw new ValidationError('account', 'must be a base58 Solana address', 'incorrect_address');
      const amount = remainingChainUnits(session, address);
      if (amount === 0n) throw new ConflictError('nothing is left to pay', 'nothing_due');
      try {
        return await deps.solanaPay({
          network: address.network,
          account,
          recipient: address.merchantAddress,
          mint: address.asset.address,
          decimals: address.asset.decimals,
          amount,
          reference: address.paymentAddress,
        });
      } catch (error) {
        throw new UpstreamError(
          `could not build the transfer on ${address.network}: ${error instanceof Error ? error.message : String(error)}`,
          'chain_unavailable',
        );
      }
    },
  );
  return router;
}
