import test, { type ExecutionContext } from 'ava';
import { couponAggregate } from '../../machines/coupon.aggregate.ts';
import type { Weir } from '../../src/app/start-weir.ts';
import { promotionCodeReleases } from '../../src/workflows/promotion-code-releases.ts';
import { workflowInstances } from '../../src/workflows/workflow-runner.ts';
import { createManualClock } from '../../src/shared/clock.ts';
import { apiClient, eventually } from '../support/api-client.ts';
import { createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';
import { type Api, assertError, forgetWorkflows, getSession, restartableWeir } from './helpers.ts';

type Coupon = {
  id: string;
  status: string;
  timesRedeemed: number;
  maxRedemptions: number | null;
  promotionCodes: { code: string; status: string; timesRedeemed: number }[];
};
type Session = { id: string; expiresAt: string; addresses: { asset: { id: string } }[] };

const START = Date.parse('2026-04-01T10:00:00.000Z');

async function createCoupon(api: Api, code: string, terms: Record<string, unknown> = { percentOff: 10 }) {
  const created = await api.post<Coupon>('/api/v1/coupons', {
    name: code,
    ...terms,
    promotionCodeData: { data: [{ code }] },
  });
  if (created.status !== 200) throw new Error(`coupon ${code}: ${JSON.stringify(created.body)}`);
  return created.body.id;
}

async function openSession(api: Api, request: Record<string, unknown> = { allowPromotionCodes: true }) {
  const created = await api.post<Session>('/api/v1/checkout/sessions', { ...sessionRequest(), ...request });
  if (created.status !== 200) throw new Error(`session: ${JSON.stringify(created.body)}`);
  return created.body;
}

const coupon = async (api: Api, id: string) => (await api.get<Coupon>(`/api/v1/coupons/${id}`)).body;
const couponEvents = (weir: Pick<Weir, 'eventStore'>, id: string) => weir.eventStore.readStream(`coupon-${id}`);
const applyCode = (weir: Pick<Weir, 'url'>, sessionId: string, code: string) =>
  apiClient(weir.url).post<{ amountDiscount: string }>(`/checkout/${sessionId}/promotion-code`, { code });

/** The coupon's redemptions given back, as its log records them: who gave each back and why. */
async function releases(weir: Pick<Weir, 'eventStore'>, couponId: string) {
  return (await couponEvents(weir, couponId))
    .filter((e) => e.type === 'PromotionCodeRedemptionReleased')
    .map((e) => ({ redemptionId: (e.data as { redemptionId: string }).redemptionId, actor: e.metadata.actor }));
}

/** A command context in the coupon's tenant, as a payer's request would act. */
async function actingFor(weir: Pick<Weir, 'eventStore'>, couponId: string) {
  const { organizationId, environment } = (await couponEvents(weir, couponId))[0]!.metadata;
  return { organizationId, environment, actor: 'payer' };
}

/** Waits until the coupon, as the API shows it, has `timesRedeemed` redemptions. */
const untilRedeemed = (api: Api, couponId: string, timesRedeemed: number) =>
  eventually(async () => {
    const current = await coupon(api, couponId);
    return current.timesRedeemed === timesRedeemed ? current : undefined;
  }, `coupon ${couponId} to count ${timesRedeemed} redemptions`);

/** A refused request: the answer, and neither the log nor the coupon's stream moved. */
async function refusedWithoutWrite(
  t: ExecutionContext,
  weir: Weir,
  couponId: string,
  request: () => Promise<Parameters<typeof assertError>[1]>,
  expected: { code: string },
) {
  const head = await weir.eventStore.headPosition();
  const before = (await couponEvents(weir, couponId)).length;
  const answer = await request();
  t.is((await couponEvents(weir, couponId)).length, before, `${expected.code}: nothing recorded on the coupon`);
  t.is(await weir.eventStore.headPosition(), head, `${expected.code}: the log must not move`);
  assertError(t, answer, 400, expected);
}

test('a refused promotion-code request (wrong currency, a code already applied, a session canceled or not accepting codes) writes nothing: the limited code keeps its redemption', async (t) => {
  const weir = await startTestWeir(t, {}, { clock: createManualClock(START) });
  const { api } = await createMerchant(weir.url);
  const usdtOnce = await createCoupon(api, 'USDTONCE', { amountOff: '10000000', currency: 'usdt', maxRedemptions: 1 });
  const once = await createCoupon(api, 'ONCE', { percentOff: 10, maxRedemptions: 1 });
  await createCoupon(api, 'OTHER', { percentOff: 5 });

  const usdc = await openSession(api);
  await refusedWithoutWrite(t, weir, usdtOnce, () => applyCode(weir, usdc.id, 'usdtonce'), {
    code: 'promotion_code_currency_mismatch',
  });

  const discounted = await openSession(api);
  t.is((await applyCode(weir, discounted.id, 'OTHER')).status, 200);
  await refusedWithoutWrite(t, weir, once, () => applyCode(weir, discounted.id, 'ONCE'), {
    code: 'parameters_exclusive',
  });

  const canceled = await openSession(api);
  t.is((await apiClient(weir.url).post(`/checkout/${canceled.id}/cancel`, {})).status, 200);
  await refusedWithoutWrite(t, weir, once, () => applyCode(weir, canceled.id, 'ONCE'), {
    code: 'status_transition_invalid',
  });

  const plain = await openSession(api, {});
  await refusedWithoutWrite(t, weir, once, () => applyCode(weir, plain.id, 'ONCE'), {
    code: 'promotion_codes_not_allowed',
  });

  for (const id of [usdtOnce, once]) t.like(await coupon(api, id), { timesRedeemed: 0, status: 'active' });
  const next = await openSession(api);
  t.is((await applyCode(weir, next.id, 'ONCE')).status, 200, 'the limited code is still there for a payer');
  t.like(await coupon(api, once), { timesRedeemed: 1, status: 'limit_reached' });
});

test('a canceled session gives its limited code back, and so does one that expires unpaid: the coupon counts it, records why, and the code serves the next payer', async (t) => {
  const clock = createManualClock(START);
  const weir = await startTestWeir(t, {}, { clock });
  const { api } = await createMerchant(weir.url);
  const once = await createCoupon(api, 'ONCE', { percentOff: 10, maxRedemptions: 1 });

  const first = await openSession(api);
  t.is((await applyCode(weir, first.id, 'ONCE')).status, 200);
  t.like(await coupon(api, once), { timesRedeemed: 1, status: 'limit_reached' });
  const second = await openSession(api, { allowPromotionCodes: true, expiresAt: '2026-04-01T10:30:00.000Z' });
  assertError(t, await applyCode(weir, second.id, 'ONCE'), 400, { code: 'coupon_limit_reached' });

  t.is((await apiClient(weir.url).post(`/checkout/${first.id}/cancel`, {})).status, 200);
  const givenBack = await untilRedeemed(api, once, 0);
  t.is(givenBack.status, 'active');
  t.like(givenBack.promotionCodes[0], { code: 'ONCE', status: 'active', timesRedeemed: 0 });
  t.is(
    (await getSession(api, first.id)).status,
    'canceled',
    'the session keeps its discount record; only the count moves',
  );

  t.is((await applyCode(weir, second.id, 'ONCE')).status, 200, 'the code given back serves the next payer');
  t.like(await coupon(api, once), { timesRedeemed: 1, status: 'limit_reached' });
  clock.set(Date.parse(second.expiresAt));
  await eventually(
    async () => ((await getSession(api, second.id)).status === 'expired' ? true : undefined),
    'the second session to expire',
  );
  t.like(await untilRedeemed(api, once, 0), { status: 'active' });

  const recorded = (await couponEvents(weir, once)).filter((e) => e.type === 'PromotionCodeRedemptionReleased');
  t.deepEqual(
    recorded.map((e) => [(e.data as { redemptionId: string }).redemptionId, (e.data as { reason: string }).reason]),
    [
      [first.id, 'the checkout session was canceled'],
      [second.id, 'the checkout session expired unpaid'],
    ],
  );
  t.true(recorded.every((e) => e.metadata.actor === 'system:promotion-code-releases'));
});

test('a redemption is given back once: the step run again, and a restart that replays the log, give nothing back twice', async (t) => {
  const clock = createManualClock(START);
  const dir = await restartableWeir(t, clock);
  const first = await dir.start();
  const { api, testSecretKey } = await createMerchant(first.url);
  const twice = await createCoupon(api, 'TWICE', { percentOff: 10, maxRedemptions: 2 });
  const kept = await openSession(api);
  const canceled = await openSession(api);
  for (const session of [kept, canceled]) t.is((await applyCode(first, session.id, 'TWICE')).status, 200);
  t.is((await apiClient(first.url).post(`/checkout/${canceled.id}/cancel`, {})).status, 200);
  await untilRedeemed(api, twice, 1);

  // The step again, as a retry or a second instance would run it: the coupon gives back nothing more.
  const again = await first.commands.handle(
    couponAggregate,
    twice,
    { type: 'ReleasePromotionCodeRedemption', redemptionId: canceled.id, reason: 'again' },
    await actingFor(first, twice),
  );
  t.is(again.position, null);
  await first.stop();

  // Replayed from the log by the workflow at start (as after a change of its version): nothing is given back twice.
  const logged = await forgetWorkflows(dir.dataDir);
  const second = await dir.start();
  const head = (await second.eventStore.headPosition())!;
  await eventually(
    async () => ((second.workflows.position(promotionCodeReleases.name) ?? -1n) >= head ? true : undefined),
    'the promotion code releases at the head of the log',
  );
  t.is(await second.readStore.collection(workflowInstances(promotionCodeReleases.name)).count({ pending: true }), 0);
  t.is((await second.eventStore.readAll(null, 100_000)).length, logged, 'the replayed log decided nothing new');
  const secondApi = apiClient(second.url, testSecretKey);
  t.like(await coupon(secondApi, twice), { timesRedeemed: 1, status: 'active' });
  t.deepEqual(await releases(second, twice), [{ redemptionId: canceled.id, actor: 'system:promotion-code-releases' }]);
});

test('a redemption recorded whose discount then lost the race to another code is given back from the log, so the coupon count stays exact', async (t) => {
  const weir = await startTestWeir(t, {}, { clock: createManualClock(START) });
  const { api } = await createMerchant(weir.url);
  const once = await createCoupon(api, 'ONCE', { percentOff: 10, maxRedemptions: 1 });
  await createCoupon(api, 'OTHER', { percentOff: 5 });
  const session = await openSession(api);
  // A request redeemed ONCE for the session and stopped there (its discount not applied yet)...
  await weir.commands.handle(
    couponAggregate,
    once,
    { type: 'RedeemPromotionCode', redemptionId: session.id, promotionCode: 'ONCE' },
    await actingFor(weir, once),
  );
  t.like(await untilRedeemed(api, once, 1), { status: 'limit_reached' });
  // ...while another payer's request applied OTHER to the same session: ONCE can never be used there.
  t.is((await applyCode(weir, session.id, 'OTHER')).status, 200);
  t.like(await untilRedeemed(api, once, 0), { status: 'active' });
  t.deepEqual(await releases(weir, once), [{ redemptionId: session.id, actor: 'system:promotion-code-releases' }]);
  t.is((await getSession(api, session.id)).amountTotal, '285000000');
});
