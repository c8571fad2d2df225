import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import { streamIdOf } from '../../src/actors/aggregate.ts';
import { organizationAggregate, organizationRecordId } from '../../src/actors/organization.ts';
import { openStores } from '../../src/app/open-stores.ts';
import type { Weir } from '../../src/app/start-weir.ts';
import type { Mailer } from '../../src/mail/mailer.ts';
import { subscriptionBilling } from '../../src/workflows/subscription-billing.ts';
import { WORKFLOW_VERSIONS, workflowInstances } from '../../src/workflows/workflow-runner.ts';
import type { ManualClock } from '../../src/shared/clock.ts';
import { apiClient, eventually, type ApiResponse } from '../support/api-client.ts';
import { chainPublisher, randomHash } from '../support/chain-publisher.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';
import { startTestWeir } from '../support/weir-harness.ts';

/** Shared by the API behaviour tests: response shapes, error assertions, log counting, paying a session. */

export type ErrorBody = { statusCode: number; error: string; message: string; code: string };

export type Price = {
  id: string;
  productId: string;
  type: string;
  currency: string;
  unitAmount: string;
  interval: string | null;
  product?: { id: string; name: string };
};
export type LineItem = {
  description: string | null;
  quantity: number;
  price: Price;
  amountTotal: string;
  currency: string;
  amountDiscount?: string;
};
export type SessionAddress = {
  id: string;
  asset: { id: string; currency: string; chainId: number };
  paymentAddress: string;
};
export type Session = {
  id: string;
  url: string;
  status: string;
  paymentStatus: string;
  createdAt: string;
  successUrl: string;
  cancelUrl: string | null;
  currency: string;
  amountTotal: string;
  amountSubtotal: string;
  livemode: boolean;
  lineItems: { object: string; data: LineItem[] };
  addresses: SessionAddress[];
  paymentIntent: { status: string };
};
/** A session as the API shows it, with what a payment after its end leaves on it. */
export type SessionView = Session & {
  invoiceId: string | null;
  amountReceived: string;
  paymentIntent: { status: string; transactions: { late: boolean }[] };
};
export type Revealed = { address: string; amountDueRaw: string };
type Hook = { type: string; data: { object: { id: string; checkoutSessionId?: string } } };
export type Page<T> = { page: number; limit: number; count: number; hasMore: boolean; data: T[] };

export type Api = ReturnType<typeof apiClient>;

/**
 * A 4xx/5xx answer in Weir's error shape: exactly `{statusCode, error, message, code}`, the status
 * repeated in the body, and (when `field` is given) a message that starts with the field's path.
 */
export function assertError(
  t: ExecutionContext,
  response: ApiResponse<unknown>,
  status: number,
  expected: { code?: string; field?: string; message?: RegExp } = {},
): ErrorBody {
  const context = JSON.stringify(response.body);
  t.is(response.status, status, context);
  const body = response.body as ErrorBody;
  t.deepEqual(Object.keys(body ?? {}).sort(), ['code', 'error', 'message', 'statusCode'], context);
  t.is(body.statusCode, status, context);
  t.is(typeof body.error, 'string', context);
  t.true(typeof body.message === 'string' && body.message.length > 0, context);
  t.regex(body.code, /^[a-z][a-z_]*$/, context);
  if (expected.code !== undefined) t.is(body.code, expected.code, context);
  if (expected.field !== undefined)
    t.true(body.message.startsWith(`${expected.field}:`), `message should name ${expected.field}: ${context}`);
  if (expected.message !== undefined) t.regex(body.message, expected.message, context);
  return body;
}

/** A 429 in the error shape, with `Retry-After` in whole seconds and a message naming the limit. */
export function assertRateLimited(
  t: ExecutionContext,
  response: ApiResponse<unknown>,
  limit: string,
  retryAfter: number,
): ErrorBody {
  const body = assertError(t, response, 429, { code: 'rate_limited' });
  t.is(body.error, 'Too Many Requests');
  t.true(body.message.startsWith(`rate limit ${limit}: `), body.message);
  t.is(response.headers.get('retry-after'), String(retryAfter));
  return body;
}

/** A new customer of the key's tenant and environment: its id. */
export async function createCustomer(api: Api, email = 'customer@example.com'): Promise<string> {
  const created = await api.post<{ id: string }>('/api/v1/customers', { email });
  if (created.status !== 200) throw new Error(`customer create failed: ${JSON.stringify(created.body)}`);
  return created.body.id;
}

/** Number of events in the whole log. */
export async function logLength(weir: Pick<Weir, 'eventStore'>): Promise<number> {
  return (await weir.eventStore.readAll(null, 100_000)).length;
}

/** The whole log as one JSON text, to look for strings that must never be stored. */
export async function logText(weir: Pick<Weir, 'eventStore'>): Promise<string> {
  const events = await weir.eventStore.readAll(null, 100_000);
  return JSON.stringify(events, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value));
}

/**
 * Appends one event as an earlier Weir (or the CLI) wrote it, past rules the API now enforces,
 * and waits for the read models to have it.
 */
export async function appendAsEarlierWeir(
  weir: Pick<Weir, 'eventStore' | 'projections'>,
  organizationId: string,
  stream: string,
  type: string,
  data: object,
): Promise<void> {
  const at = new Date().toISOString();
  const metadata = {
    organizationId,
    environment: 'test' as const,
    actor: 'cli',
    correlationId: randomUUID(),
    occurredAt: at,
  };
  await weir.eventStore.append(stream, [{ id: randomUUID(), type, data: { ...data, at }, metadata }], 'any');
  await weir.projections.waitFor((await weir.eventStore.headPosition())!);
}

/** Base Sepolia's chain id, and the forwarder factory `startWeirWithBaseSepolia` gives it. */
export const BASE_SEPOLIA = 84_532;
export const BASE_SEPOLIA_FACTORY = '0x00000000000000000000000000000000000fac70';

/** BNB Smart Chain Testnet's chain id: its USDC has 18 decimals, where the test network's has 6. */
export const BSC_TESTNET = 97;

/** A Weir offering the EVM network `chainId` besides the test network; no follower runs, so its endpoint is never contacted. */
export const startWeirWithEvmNetwork = (t: ExecutionContext, chainId: number) =>
  startTestWeir(
    t,
    {
      chainEnv: {
        [`WEIR_RPC_${chainId}`]: 'http://127.0.0.1:9',
        [`WEIR_FACTORY_${chainId}`]: BASE_SEPOLIA_FACTORY,
      },
    },
    { evmFollowers: false },
  );

/** A Weir offering Base Sepolia on the EVM rail besides the test network. */
export const startWeirWithBaseSepolia = (t: ExecutionContext) => startWeirWithEvmNetwork(t, BASE_SEPOLIA);

/**
 * `WithdrawalAddressAdded` as a Weir that took any well-formed address recorded it (the zero address,
 * a failing checksum), appended to the log as is: a wallet the rail cannot pay.
 */
export async function appendOldWallet(
  weir: Pick<Weir, 'eventStore' | 'projections'>,
  organizationId: string,
  wallet: { id: string; address: string; chainId: number; isDefault: boolean },
) {
  const at = new Date().toISOString();
  await weir.eventStore.append(
    streamIdOf(organizationAggregate.category, organizationRecordId(organizationId, 'test')),
    [
      {
        id: randomUUID(),
        type: 'WithdrawalAddressAdded',
        data: { withdrawalAddress: { ...wallet, name: 'old wallet', createdAt: at, updatedAt: at } },
        metadata: { organizationId, environment: 'test', actor: 'cli', correlationId: randomUUID(), occurredAt: at },
      },
    ],
    'any',
  );
  await weir.projections.waitFor((await weir.eventStore.headPosition())!);
}

/** A fixed-price payment link, "Tea" for `amount` (10^8-scaled) USDC: the link a test of its page needs. */
export const teaLink = async (api: Api, amount = '100000000') =>
  (await api.post<{ id: string; url: string }>('/api/v1/payment-links', { title: 'Tea', amount, currency: 'usdc' }))
    .body;

/** A finalized invoice of one "Hour" line (100 units of USDC) to a new customer: the invoice a test of its hosted page needs. */
export async function hourInvoice(t: ExecutionContext, api: Api): Promise<string> {
  const customerId = await createCustomer(api, 'ada@example.com');
  const draft = (
    await api.post<{ id: string }>('/api/v1/invoices', {
      customerId,
      lineItems: { data: [{ priceData: { currency: 'usdc', unitAmount: '100', productData: { name: 'Hour' } } }] },
    })
  ).body;
  t.is((await api.post(`/api/v1/invoices/${draft.id}/finalize`)).status, 200);
  return draft.id;
}

/** One line of 3.00 USDC: the invoice the invoice payment tests pay. */
export const AUDIT_LINES = {
  data: [{ priceData: { currency: 'usdc', unitAmount: '300000000', productData: { name: 'Audit' } }, quantity: 1 }],
};

/** A finalized invoice of `lineItems` (3.00 USDC unless said) to a new customer: its id. */
export async function openInvoice(api: Api, lineItems: object = AUDIT_LINES): Promise<string> {
  const draft = (
    await api.post<{ id: string }>('/api/v1/invoices', { customerId: await createCustomer(api), lineItems })
  ).body;
  await api.post(`/api/v1/invoices/${draft.id}/finalize`);
  return draft.id;
}

/** The payer opens the invoice's pay link: the checkout session it redirects to. */
export async function openPayPage(weir: Pick<Weir, 'url'>, invoiceId: string): Promise<string> {
  const page = await fetch(`${weir.url}/invoices/${invoiceId}/pay`, { redirect: 'manual' });
  if (page.status !== 302) throw new Error(`the pay page answered ${page.status}`);
  return page.headers.get('location')!.split('/').pop()!;
}

/** The session a payer opens on a fixed-price payment link's page at `url` (nothing collected), as the API shows it. */
export async function linkPageSession<T extends Session = Session>(api: Api, url: string): Promise<T> {
  const submitted = await fetch(url, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: '',
  });
  const id = /\/checkout\/([0-9a-f-]{36})$/.exec(submitted.headers.get('location') ?? '')?.[1];
  if (submitted.status !== 303 || !id)
    throw new Error(`the link's page answered ${submitted.status}: ${(await submitted.text()).slice(0, 1000)}`);
  return (await api.get<T>(`/api/v1/checkout/sessions/${id}`)).body;
}

/**
 * Asserts that the request is refused with a 400 naming `field`, and that it wrote nothing to the
 * log. The request must not carry an Idempotency-Key (that bookkeeping is written on purpose).
 */
export async function assertRejectedWithoutWrite(
  t: ExecutionContext,
  weir: Pick<Weir, 'eventStore'>,
  request: () => Promise<ApiResponse<unknown>>,
  expected: { field?: string; code?: string; message?: RegExp; status?: number },
): Promise<ErrorBody> {
  const before = await logLength(weir);
  const body = assertError(t, await request(), expected.status ?? 400, expected);
  t.is(await logLength(weir), before, `a refused request must not write to the log (${body.message})`);
  return body;
}

let nextBlock = 1_000;

/**
 * A payer sends a session its full amount: reveal the address of `currency` (USDC unless said) on
 * the hosted page, then the chain shows a transfer of the exact amount, not final yet. Resolves
 * once detected (the session processing), with `final`, which makes its block final.
 */
export async function sendPayment(
  weir: Pick<Weir, 'url' | 'bus'>,
  api: Api,
  session: Pick<Session, 'id' | 'addresses'>,
  currency: 'usdc' | 'dai' = 'usdc',
): Promise<{ final: () => Promise<void> }> {
  const usdc = session.addresses.find((a) => a.asset.currency === currency);
  if (!usdc) throw new Error(`session ${session.id} offers no ${currency} address`);
  const reveal = await apiClient(weir.url).post<{ address: string; amountDueRaw: string }>(
    `/checkout/${session.id}/payment-method`,
    { assetId: usdc.asset.id },
  );
  if (reveal.status !== 200) throw new Error(`reveal failed: ${JSON.stringify(reveal.body)}`);
  const chain = chainPublisher(weir.bus);
  const blockNumber = nextBlock++;
  const blockHash = randomHash();
  await chain.transfer({
    to: reveal.body.address,
    amount: reveal.body.amountDueRaw,
    asset: currency,
    blockNumber,
    blockHash,
  });
  await eventually(async () => {
    const s = (await api.get<Session>(`/api/v1/checkout/sessions/${session.id}`)).body;
    return s.paymentIntent.status === 'processing' ? s : undefined;
  }, 'the transfer to be detected');
  return { final: () => chain.final(blockNumber, blockHash) };
}

/** Pays a session in full as a payer would (`sendPayment`, its block then final). Resolves when complete. */
export async function payInFull(
  weir: Pick<Weir, 'url' | 'bus'>,
  api: Api,
  session: Pick<Session, 'id' | 'addresses'>,
  currency: 'usdc' | 'dai' = 'usdc',
): Promise<Session> {
  await (await sendPayment(weir, api, session, currency)).final();
  return eventually(async () => {
    const s = (await api.get<Session>(`/api/v1/checkout/sessions/${session.id}`)).body;
    return s.status === 'complete' ? s : undefined;
  }, `session ${session.id} to complete`);
}

export const getSession = async (api: Api, id: string) =>
  (await api.get<SessionView>(`/api/v1/checkout/sessions/${id}`)).body;
export const sessionEvents = (weir: Pick<Weir, 'eventStore'>, id: string) =>
  weir.eventStore.readStream(`checkout_session-${id}`);

/** The payer chooses USDC on the session's page: the deposit address and the amount to send. */
export async function reveal(weir: Pick<Weir, 'url'>, api: Api, sessionId: string): Promise<Revealed> {
  const usdc = (await getSession(api, sessionId)).addresses.find((a) => a.asset.currency === 'usdc')!;
  const answer = await apiClient(weir.url).post<Revealed>(`/checkout/${sessionId}/payment-method`, {
    assetId: usdc.asset.id,
  });
  if (answer.status !== 200) throw new Error(`reveal failed: ${JSON.stringify(answer.body)}`);
  return answer.body;
}

export const untilCanceled = (api: Api, id: string) =>
  eventually(async () => {
    const s = await getSession(api, id);
    return s.status === 'canceled' ? s : undefined;
  }, `session ${id} to be canceled`);

/** The `CheckoutSessionCanceled` events of a session, with who recorded them and why. */
export async function cancellations(weir: Pick<Weir, 'eventStore'>, id: string) {
  return (await sessionEvents(weir, id))
    .filter((e) => e.type === 'CheckoutSessionCanceled')
    .map((e) => ({ actor: e.metadata.actor, reason: (e.data as { reason: string | null }).reason }));
}

/** A receiver subscribed to the webhook `types` of sessions, and the types it received about one session. */
export async function receiveHooks(t: ExecutionContext, api: Api, types: string[]) {
  const receiver = await startWebhookReceiver();
  t.teardown(() => receiver.close());
  const endpoint = await api.post('/api/v1/webhook-endpoints', {
    description: 'sessions',
    url: receiver.url,
    enabledEvents: { events: types },
  });
  if (endpoint.status !== 200) throw new Error(`endpoint: ${JSON.stringify(endpoint.body)}`);
  const about = (sessionId: string) =>
    receiver.received
      .map((h) => JSON.parse(h.body) as Hook)
      .filter((h) => (h.data.object.checkoutSessionId ?? h.data.object.id) === sessionId)
      .map((h) => h.type)
      .sort();
  return {
    about,
    waitFor: (sessionId: string, wanted: string[]) =>
      receiver.waitFor(() => wanted.every((type) => about(sessionId).includes(type))),
  };
}

/**
 * A part (1/`of`) of what the session asks reaches its USDC deposit address, and its block becomes
 * final: the session is `incomplete`, waiting for the rest. Resolves with the session then.
 */
export async function payPart(
  weir: Pick<Weir, 'url' | 'bus'>,
  api: Api,
  sessionId: string,
  of = 3n,
): Promise<SessionView> {
  const shown = await reveal(weir, api, sessionId);
  const chain = chainPublisher(weir.bus);
  const blockNumber = nextBlock++;
  const blockHash = randomHash();
  await chain.transfer({
    to: shown.address,
    amount: (BigInt(shown.amountDueRaw) / of).toString(),
    blockNumber,
    blockHash,
  });
  await chain.final(blockNumber, blockHash);
  return eventually(async () => {
    const s = await getSession(api, sessionId);
    return s.status === 'incomplete' ? s : undefined;
  }, `session ${sessionId} to be partly paid`);
}

/** Money sent to a deposit address the payer was shown, after its session ended. */
export async function payLate(
  weir: Pick<Weir, 'bus'>,
  api: Api,
  sessionId: string,
  revealed: Revealed,
): Promise<SessionView> {
  const chain = chainPublisher(weir.bus);
  const blockNumber = nextBlock++;
  const blockHash = randomHash();
  await chain.transfer({ to: revealed.address, amount: revealed.amountDueRaw, blockNumber, blockHash });
  await chain.final(blockNumber, blockHash);
  // Recorded as late once its block is final (until then it shows as detected only).
  return eventually(async () => {
    const s = await getSession(api, sessionId);
    return s.paymentIntent.transactions.some((t) => t.late) ? s : undefined;
  }, `the late payment to ${sessionId}`);
}

/** A Weir on a data dir that outlives it, so the test can restart it on the same log (mailing to `mailer` when given). */
export async function restartableWeir(t: ExecutionContext, clock: ManualClock, mailer?: Mailer) {
  const dataDir = await mkdtemp(join(tmpdir(), 'weir-restartable-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  return { dataDir, start: () => startTestWeir(t, { dataDir }, { clock, ...(mailer ? { mailer } : {}) }) };
}

/**
 * Every event in the log has been projected and folded by the workflow `name`, and its commands
 * and effects have run (checked again until nothing more was appended meanwhile).
 */
export async function workflowSettled(
  weir: Pick<Weir, 'eventStore' | 'projections' | 'readStore' | 'workflows'>,
  name: string,
): Promise<void> {
  const pending = weir.readStore.collection(workflowInstances(name));
  await eventually(async () => {
    const head = (await weir.eventStore.headPosition())!;
    await weir.projections.waitFor(head);
    const at = weir.workflows.position(name);
    if (at === null || at < head || (await pending.count({ pending: true })) > 0) return undefined;
    return (await weir.eventStore.headPosition()) === head ? true : undefined;
  }, `the workflow ${name} to settle`);
}

/** The subscription billing workflow has settled (see `workflowSettled`). */
export const settled = (weir: Pick<Weir, 'eventStore' | 'projections' | 'readStore' | 'workflows'>): Promise<void> =>
  workflowSettled(weir, subscriptionBilling.name);

/**
 * The workflows of the stopped Weir on `dataDir` forget what they decided, as after a change of
 * their version: its next start folds and decides the whole log again. Answers the log's length.
 */
export async function forgetWorkflows(dataDir: string): Promise<number> {
  const stores = await openStores({ dataDir });
  await stores.readStore.collection(WORKFLOW_VERSIONS).clear();
  const events = (await stores.eventStore.readAll(null, 100_000)).length;
  await stores.readStore.close();
  await stores.eventStore.close();
  return events;
}
