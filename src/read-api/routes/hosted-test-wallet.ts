import Router from '@koa/router';
import { BaseError, erc20Abi, getAddress, type Address, type Hash } from 'viem';
import type { CheckoutSession, SessionAddress } from '../../../machines/checkout-session.types.ts';
import { createEvmWriteClients } from '../../chain-ingest/evm/contracts/clients.ts';
import type { DevnetInfo } from '../../chain-ingest/evm/devnet/devnet-info.ts';
import { evmToTron, tronToEvm } from '../../chain-ingest/tron/address.ts';
import { shownHashOn, TRON_LOCAL_CHAIN_ID } from '../../chain-ingest/tron/networks.ts';
import { remainingChainUnits } from '../../hosted/wallet-actions.ts';
import { COLLECTIONS, type CheckoutSessionDoc } from '../../projections/collections.ts';
import {
  ConflictError,
  ForbiddenError,
  NotFoundError,
  UpstreamError,
  ValidationError,
  WeirError,
} from '../../shared/errors.ts';
import { isUuid } from '../../shared/ids.ts';
import type { ApiDeps, ApiState } from '../api-context.ts';
import { idParams, invalidFields } from '../schema/fields.ts';
import { hostedNotFound, TestPaymentAnswer, TestPaymentRequest } from '../schema/hosted.ts';
import { parseWith, schemaRoutes } from '../schema/route.ts';

/** One payment the test wallet makes: `amount` chain units of `token` (null: the native coin) to `to`. */
export type TestPayment = { to: Address; token: Address | null; amount: bigint };

/** Sends a test payment on the devnet and resolves with its hash once mined. */
export type SendTestPayment = (devnet: DevnetInfo, payment: TestPayment) => Promise<Hash>;

/**
 * The account the test wallet pays from: the last of the devnet's funded payers, so the first stays
 * free for scripts and tests that pay by hand (two senders on one account would race for nonces).
 */
export const testWalletAccount = (devnet: DevnetInfo) => devnet.accounts.filter((a) => a.role === 'payer').at(-1);

/** Sends from the test wallet account, one transaction after the other (one nonce sequence). */
function createDevnetSender(): SendTestPayment {
  let queue: Promise<unknown> = Promise.resolve();
  const send: SendTestPayment = async (devnet, { to, token, amount }) => {
    const payer = testWalletAccount(devnet);
    if (!payer) throw new ForbiddenError('the local devnet has no funded payer account', 'test_wallet_unavailable');
    const { publicClient, walletClient } = createEvmWriteClients({
      rpcUrl: devnet.rpcUrl,
      chainId: devnet.chainId,
      privateKey: payer.privateKey,
    });
    let hash: Hash;
    try {
      hash = token
        ? await walletClient.writeContract({
            address: token,
            abi: erc20Abi,
            functionName: 'transfer',
            args: [to, amount],
          })
        : await walletClient.sendTransaction({ to, value: amount });
    } catch (error) {
      throw new UpstreamError(
        `the test wallet could not send on the local devnet (${devnet.rpcUrl}): ${error instanceof BaseError ? error.shortMessage : String(error)}`,
        'test_wallet_failed',
      );
    }
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    if (receipt.status !== 'success')
      throw new UpstreamError(`the test wallet's transaction ${hash} reverted`, 'test_wallet_failed');
    return hash;
  };
  return (devnet, payment) => {
    const run = queue.catch(() => undefined).then(() => send(devnet, payment));
    queue = run;
    return run;
  };
}

/** How many sessions' in-flight test payments are remembered (the oldest are forgotten first). */
const MAX_IN_FLIGHT = 1_000;
/** How long a sent test payment holds back another for its session while the follower has not seen it yet. */
const IN_FLIGHT_MS = 60_000;

/**
 * How a chain's addresses read: T… on the local Tron (its anvil takes the 0x form, so they are
 * turned at this edge only), checksummed 0x elsewhere.
 */
const addressForm = (chainId: number) =>
  chainId === TRON_LOCAL_CHAIN_ID
    ? { toNode: (address: string) => tronToEvm(address), shown: (address: string) => evmToTron(address) }
    : { toNode: (address: string) => getAddress(address), shown: (address: string) => getAddress(address) };

/**
 * `POST /checkout/{id}/test-payment {assetId?}`: the hosted page's "Pay with test wallet". Pays what
 * is still due in the chosen asset from a funded account of the local devnet (or of the local
 * Tron) to the session's deposit address, and answers the transaction hash. Only for a test
 * session, an open one, whose chosen asset is on a local chain Weir knows; otherwise refused and
 * nothing is sent. A live session never has it: 404, as if the route did not exist.
 */
export function hostedTestWalletRoutes(
  deps: Pick<ApiDeps, 'readStore' | 'clock'> & {
    devnet?: DevnetInfo | null;
    /** The local Tron's anvil and accounts (0x form, as it runs them). */
    tronDevnet?: DevnetInfo | null;
    sendTestPayment?: SendTestPayment;
  },
): Router<ApiState> {
  const devnets = [deps.devnet, deps.tronDevnet].filter((d): d is DevnetInfo => !!d);
  const router = new Router<ApiState>({ prefix: '/checkout' });
  const sessions = deps.readStore.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions);
  const sendTestPayment = deps.sendTestPayment ?? createDevnetSender();
  // Test payments sent (or being sent: no hash yet) and not yet seen on their session, by session
  // id: a second click before the follower saw the first must not pay twice.
  const inFlight = new Map<string, { hash: Hash | null; at: number }>();

  /** The chosen deposit address and the local chain it is on, when the test wallet may pay it; throws saying why not. */
  const payableAddress = (
    session: CheckoutSession,
    assetId: string | undefined,
  ): { address: SessionAddress; devnet: DevnetInfo } => {
    if (session.status !== 'open' && session.status !== 'incomplete')
      throw new ForbiddenError(
        `this checkout session is ${session.status}: there is nothing to pay`,
        'session_not_open',
      );
    // A partly paid (incomplete) session never expires: it waits for the rest, whatever expiresAt says.
    if (session.status === 'open' && Date.parse(session.expiresAt) <= deps.clock.now())
      throw new ForbiddenError('this checkout session has expired: there is nothing to pay', 'session_not_open');
    const method = session.paymentIntent.paymentMethod;
    if (!method) throw new ValidationError('assetId', 'choose how to pay on the page first', 'payment_method_missing');
    if (assetId !== undefined && assetId !== method.id && assetId !== method.asset.id)
      throw new ValidationError('assetId', 'is not the payment method chosen on the page; choose it first');
    const address = session.addresses.find((a) => a.id === method.id);
    if (!address) throw new ValidationError('assetId', 'is not offered by this checkout session');
    const devnet = devnets.find((d) => d.chainId === address.asset.chainId);
    if (!devnet)
      throw new ForbiddenError(
        `the test wallet pays on the local chains only; ${address.asset.symbol} on ${address.network} is not on one`,
        'test_wallet_unavailable',
      );
    return { address, devnet };
  };

  /** The session, when it has a test wallet at all (a live one is a 404 whatever this server runs). */
  const walletSession = async (id: string): Promise<CheckoutSessionDoc> => {
    const session = isUuid(id) ? await sessions.get(id) : null;
    if (!session) throw new NotFoundError('checkout session', id);
    if (session.environment !== 'test')
      throw new WeirError(404, 'Not Found', 'resource_missing', 'there is no test wallet for a live checkout session');
    if (devnets.length === 0)
      throw new ForbiddenError(
        'no local devnet on this server: the test wallet pays on the local chains only',
        'test_wallet_unavailable',
      );
    return session;
  };

  schemaRoutes(router, { tag: 'Hosted checkout', auth: 'public' }).route(
    {
      method: 'post',
      path: '/:id/test-payment',
      summary: 'Pay with the test wallet',
      description:
        "Test sessions on the local devnet or local Tron only: pays what is still due in the chosen asset from a funded account of that chain, once mined (addresses answered in the chain's own form: T… on Tron). A live session has no test wallet (404).",
      params: idParams('checkout session'),
      // Read once the session is known to have a test wallet: a live session is a 404 whatever the body.
      bodyTypes: { 'application/json': TestPaymentRequest },
      bodyOptional: true,
      response: TestPaymentAnswer,
      errors: [
        invalidFields('payment_method_missing'),
        {
          status: 403,
          codes: ['test_wallet_unavailable', 'session_not_open'],
          description: 'No local chain here, the chosen asset is not on one, or the session is over',
        },
        hostedNotFound('checkout session'),
        {
          status: 409,
          codes: ['test_payment_pending', 'nothing_due'],
          description: 'A test payment is on its way, or nothing is left to pay',
        },
        { status: 502, codes: ['test_wallet_failed'], description: 'The devnet refused or reverted the payment' },
      ],
    },
    async (ctx, { params: { id } }) => {
      const session = await walletSession(id);
      const { assetId } = parseWith(TestPaymentRequest, ctx.state.body ?? {});
      const { address, devnet } = payableAddress(session, assetId);
      const form = addressForm(devnet.chainId);

      const sent = inFlight.get(session.id);
      const seen = (hash: Hash | null) =>
        hash !== null && session.payments.some((p) => p.transactionHash.toLowerCase() === hash.toLowerCase());
      if (sent && !seen(sent.hash) && deps.clock.now() - sent.at < IN_FLIGHT_MS)
        throw new ConflictError(
          `a test payment is already on its way${sent.hash ? ` (${shownHashOn(devnet.chainId, sent.hash)})` : ''}; wait for the page to show it`,
          'test_payment_pending',
        );
      inFlight.delete(session.id);
      const amount = remainingChainUnits(session, address);
      if (amount === 0n)
        throw new ConflictError(
          'nothing is left to pay: the payments sent are waiting for confirmation',
          'nothing_due',
        );

      const token = address.asset.address === 'native' ? null : form.toNode(address.asset.address);
      const to = form.toNode(address.paymentAddress);
      // Marked before sending, so a second click while this one is on its way is refused.
      inFlight.set(session.id, { hash: null, at: deps.clock.now() });
      if (inFlight.size > MAX_IN_FLIGHT) inFlight.delete(inFlight.keys().next().value!);
      let hash: Hash;
      try {
        hash = await sendTestPayment(devnet, { to, token, amount });
      } catch (error) {
        inFlight.delete(session.id);
        throw error;
      }
      inFlight.set(session.id, { hash, at: deps.clock.now() });
      const from = testWalletAccount(devnet)?.address;
      return {
        transactionHash: shownHashOn(devnet.chainId, hash),
        from: from === undefined ? null : form.shown(from),
        to: form.shown(to),
        assetId: address.asset.id,
        amountRaw: amount.toString(),
        chainId: devnet.chainId,
      };
    },
  );

  return router;
}
