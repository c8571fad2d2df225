import test, { type ExecutionContext } from 'ava';
import { createManualClock } from '../../src/shared/clock.ts';
import { eventually } from '../support/api-client.ts';
import { chainPublisher, randomHash } from '../support/chain-publisher.ts';
import { createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';
import { type Api, payPart, type Session } from './helpers.ts';

/**
 * The checkout page's forms (without JavaScript) refused by the session's or the coupon's decider: the
 * page again in the payer's words with the refusal's status. The refusals' own words (a coupon's id, a
 * redemption limit, an API route) used to be shown as they were. The page's script (its JSON routes)
 * is answered in the same words, which it shows as they are: they used to be the API's.
 */

/** What a payer must never read: the API's records, ids, routes and timestamps. */
const INTERNALS =
  /coupon|checkout session|redemption|command|aggregate|revision|\/api\/|[0-9a-f]{8}-[0-9a-f]{4}|\d{4}-\d\d-\d\dT/i;

const detailOf = (html: string) =>
  /<span id="status-detail">([^<]*)<\/span>/.exec(html)?.[1]?.replace(/&#39;/g, "'").trim();

async function refused(t: ExecutionContext, url: string, body: string, status = 400) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body,
    redirect: 'manual',
  });
  const html = await response.text();
  t.is(response.status, status, `${body}: ${html.slice(0, 300)}`);
  t.regex(response.headers.get('content-type') ?? '', /^text\/html/);
  const detail = detailOf(html) ?? '';
  t.notRegex(detail, INTERNALS, body);
  return detail;
}

/**
 * What the page's script is answered when it posts `body` to `/checkout/{id}/{route}`: the API's error
 * shape with the refusal's status and code, its message the payer's words, the same the form is shown.
 */
async function scriptRefused(
  t: ExecutionContext,
  sessionUrl: string,
  route: string,
  body: object,
  expected: { status: number; code: string },
) {
  const response = await fetch(`${sessionUrl}/${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const answer = (await response.json()) as { statusCode: number; error: string; message: string; code: string };
  t.is(response.status, expected.status, JSON.stringify(answer));
  t.deepEqual(Object.keys(answer).sort(), ['code', 'error', 'message', 'statusCode']);
  t.like(answer, { statusCode: expected.status, code: expected.code });
  t.notRegex(answer.message, INTERNALS, route);
  return answer.message;
}

const promotable = async (api: Api) =>
  (
    await api.post<Session & { url: string }>('/api/v1/checkout/sessions', {
      ...sessionRequest('150000000', 2),
      allowPromotionCodes: true,
    })
  ).body;

test("a promotion code the coupon refuses (used up, disabled, unknown, a second one, while a payment is on its way) is said in the payer's words, never naming the coupon, its id or a limit; a payment on its way is a 409", async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url, 'Corner Coffee');
  const coupon = (name: string, code: string, extra: object = {}) =>
    api.post<{ id: string }>('/api/v1/coupons', {
      name,
      percentOff: 10,
      promotionCodeData: { data: [{ code }] },
      ...extra,
    });
  t.is((await coupon('Launch', 'LAUNCH', { maxRedemptions: 1 })).status, 200);
  t.is((await coupon('Spare', 'SPARE')).status, 200);
  const old = (await coupon('Old', 'OLD')).body;
  t.is((await api.put(`/api/v1/coupons/${old.id}`, { isEnable: false })).status, 200);

  const first = await promotable(api);
  const second = await promotable(api);
  const apply = (code: string) => `action=promotion-code&code=${code}`;
  const applied = await fetch(first.url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: apply('LAUNCH'),
    redirect: 'manual',
  });
  t.is(applied.status, 303);

  t.is(await refused(t, second.url, apply('LAUNCH')), 'This promotion code has been used as many times as it can be.');
  t.is(await refused(t, second.url, apply('OLD')), 'This promotion code can no longer be used.');
  t.is(await refused(t, second.url, apply('NOPE')), 'This is not a valid promotion code: check it and try again.');
  t.is(
    await refused(t, first.url, apply('SPARE')),
    'Another promotion code is already applied to this checkout: only one can be used.',
  );

  await chainPublisher(weir.bus).transfer({
    to: second.addresses[0]!.paymentAddress,
    amount: '3000000',
    blockNumber: 5,
    blockHash: randomHash(),
  });
  await eventually(
    async () =>
      (await api.get<{ payments: unknown[] }>(`/api/v1/checkout/sessions/${second.id}`)).body.payments.length > 0
        ? true
        : undefined,
    'the payment detected',
  );
  t.is(
    await refused(t, second.url, apply('SPARE'), 409),
    'A payment to this checkout is on its way: a promotion code can only be applied before paying.',
  );
});

test("a cancel of a partly paid checkout is refused in the payer's words (was the API's, naming its complete-partial route)", async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url, 'Corner Coffee');
  const session = (await api.post<Session & { url: string }>('/api/v1/checkout/sessions', sessionRequest())).body;
  await payPart(weir, api, session.id);
  t.is(
    await refused(t, session.url, 'action=cancel'),
    'Part of the amount has already been received, so this payment can no longer be canceled. Send the rest to complete it.',
  );
});

test("the page's script is refused in the payer's words, the same as its forms: a used-up coupon, an expired code, the cancel of a partly paid checkout (was the API's: ids, timestamps, a route)", async (t) => {
  const at = (iso: string) => Date.parse(iso);
  const clock = createManualClock(at('2026-03-01T00:00:00.000Z'));
  const weir = await startTestWeir(t, {}, { clock });
  const { api } = await createMerchant(weir.url, 'Corner Coffee');
  const coupon = (name: string, extra: object) =>
    api.post<{ id: string }>('/api/v1/coupons', { name, percentOff: 10, ...extra });
  t.is((await coupon('Launch', { maxRedemptions: 1, promotionCodeData: { data: [{ code: 'LAUNCH' }] } })).status, 200);
  const early = { promotionCodeData: { data: [{ code: 'EARLY', expiredAt: '2026-03-01T00:10:00Z' }] } };
  t.is((await coupon('Early', early)).status, 200);

  const first = await promotable(api);
  const second = await promotable(api);
  const apply = (code: string) => ({ code });
  t.is(
    (
      await fetch(`${first.url}/promotion-code`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(apply('LAUNCH')),
      })
    ).status,
    200,
  );
  const usedUp = 'This promotion code has been used as many times as it can be.';
  const limited = { status: 400, code: 'coupon_limit_reached' };
  t.is(await scriptRefused(t, second.url, 'promotion-code', apply('LAUNCH'), limited), usedUp);
  t.is(await refused(t, second.url, 'action=promotion-code&code=LAUNCH'), usedUp);

  clock.advanceTo(at('2026-03-01T00:10:01.000Z'));
  const expired = { status: 400, code: 'promotion_code_expired' };
  t.is(
    await scriptRefused(t, second.url, 'promotion-code', apply('EARLY'), expired),
    'This promotion code has expired.',
  );
  t.is(await refused(t, second.url, 'action=promotion-code&code=EARLY'), 'This promotion code has expired.');

  // The code's own check (empty), before any decider: the form's words too.
  const empty = { status: 400, code: 'parameter_invalid_string_empty' };
  t.is(await scriptRefused(t, second.url, 'promotion-code', apply(''), empty), 'The promotion code must not be empty.');
  t.is(await refused(t, second.url, 'action=promotion-code&code='), 'The promotion code must not be empty.');

  const partly = await promotable(api);
  await payPart(weir, api, partly.id);
  const kept =
    'Part of the amount has already been received, so this payment can no longer be canceled. Send the rest to complete it.';
  const cancel = { status: 400, code: 'status_transition_invalid' };
  t.is(await scriptRefused(t, partly.url, 'cancel', {}, cancel), kept);
  t.is(await refused(t, partly.url, 'action=cancel'), kept);
});
