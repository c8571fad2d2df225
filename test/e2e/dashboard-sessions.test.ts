import test from 'ava';
import { createManualClock } from '../../src/shared/clock.ts';
import { getSession, payInFull, payLate, receiveHooks, reveal, sessionEvents, type Session } from '../api/helpers.ts';
import { eventually } from '../support/api-client.ts';
import { chainPublisher, randomHash } from '../support/chain-publisher.ts';
import { sessionRequest } from '../support/weir-harness.ts';
import type { Page } from 'playwright-core';
import { axeOf } from '../support/chromium.ts';
import { chromiumPerFile, expectAccessible, screenshot, startDashboard, watchPage } from '../support/dashboard.ts';

const browser = chromiumPerFile(test);
const SESSIONS = '/api/v1/checkout/sessions';

test('Checkout sessions: list, filters and search, a paid session with its payment, timeline and webhook attempts, cancel from the dashboard, a refused recovery, live updates', async (t) => {
  const dash = await startDashboard(t);
  const merchant = await dash.organization();
  const hooks = await receiveHooks(t, merchant.api, ['checkout_session.completed']);
  const create = async (body: object) => {
    const created = await merchant.api.post<Session>(SESSIONS, { ...sessionRequest('1250000000', 1), ...body });
    t.is(created.status, 200, JSON.stringify(created.body));
    return created.body;
  };
  const paid = await create({ clientReferenceId: 'order-1001', customerData: { email: 'pat@example.com' } });
  await payInFull(dash.weir, merchant.api, paid);
  await hooks.waitFor(paid.id, ['checkout_session.completed']);
  const toCancel = await create({ clientReferenceId: 'order-1002' });
  const open = await create({ clientReferenceId: 'order-1003' });

  const owner = await dash.user({ role: 'owner' });
  const page = await dash.signedIn(browser(), owner);
  const problems = await watchPage(page);
  await page.goto(`${dash.url}/dashboard/checkout-sessions`);
  await page.locator('body[data-live="on"]').waitFor();
  const rows = page.locator('#sessions tbody tr');
  t.is(await rows.count(), 3);
  await expectAccessible(t, page, 'checkout-sessions');
  await screenshot(t, page, 'checkout-sessions');

  // A session created while the list is open shows without a reload.
  await create({ clientReferenceId: 'order-1004' });
  await page.locator('#sessions tbody tr').nth(3).waitFor();
  t.is(await rows.count(), 4);

  // Search by the customer's email, then filter by status.
  await page.getByLabel('Search').fill('PAT@example.com');
  await Promise.all([page.waitForURL(/q=PAT/), page.getByRole('button', { name: 'Apply' }).click()]);
  t.is(await rows.count(), 1);
  t.regex((await rows.first().textContent()) ?? '', /12\.50 USDC.*Complete.*pat@example\.com/s);
  await page.goto(`${dash.url}/dashboard/checkout-sessions?status=open&q=order-1003`);
  t.is(await rows.count(), 1);
  t.is(await rows.first().locator('code').getAttribute('title'), open.id);

  // A date that is no date: named at its field, the list unfiltered by it.
  const bad = await page.goto(`${dash.url}/dashboard/checkout-sessions?from=2026-02-31`);
  t.is(bad?.status(), 400);
  t.is(await page.locator('#field-from-error').textContent(), '2026-02-31 does not exist: February 2026 has 28 days.');
  // The list refreshes as shown, unfiltered by the refused date (its refresh was a 400 at every change of a session).
  t.is(await page.locator('#sessions').getAttribute('hx-get'), '/dashboard/checkout-sessions');

  // A session of a customer (customerId), which collected nothing: the list and its page name the customer, linked.
  const customer = await merchant.api.post<{ id: string }>('/api/v1/customers', {
    email: 'ada@example.com',
    name: 'Ada Lovelace',
  });
  t.is(customer.status, 200, JSON.stringify(customer.body));
  const ofCustomer = await create({ clientReferenceId: 'order-1005', customerId: customer.body.id });
  await page.goto(`${dash.url}/dashboard/checkout-sessions?q=order-1005`);
  const customerLink = rows.first().getByRole('link', { name: 'Ada Lovelace' });
  t.is(await customerLink.getAttribute('href'), `/dashboard/customers/${customer.body.id}`);
  await page.goto(`${dash.url}/dashboard/checkout-sessions/${ofCustomer.id}`);
  t.is(
    await page.locator('#session-summary').getByRole('link', { name: 'Ada Lovelace' }).getAttribute('href'),
    `/dashboard/customers/${customer.body.id}`,
  );
  await expectAccessible(t, page, 'checkout-session-of-customer');

  // The paid session: its payment, its timeline and the webhook's attempt. The test chain has no explorer
  // (its http://127.0.0.1/tx/… is a placeholder nothing answers): the hash is shown, linked to nothing.
  await page.goto(`${dash.url}/dashboard/checkout-sessions/${paid.id}`);
  await page.locator('#webhooks').getByText('HTTP 200').waitFor();
  const titles = await page
    .locator('#transactions code')
    .evaluateAll((codes) => codes.map((c) => c.getAttribute('title')));
  t.is(titles.filter((title) => /^0x[0-9a-f]{64}$/i.test(title ?? '')).length, 1, 'the transaction hash');
  t.is(await page.locator('#transactions a').count(), 0, 'no dead explorer link');
  t.regex((await page.locator('#transactions').textContent()) ?? '', /12\.50 USDC.*Confirmed/s);
  const timeline = (await page.locator('#timeline').textContent()) ?? '';
  for (const step of ['Checkout session created', 'Payment detected', 'Checkout session completed'])
    t.true(timeline.includes(step), step);
  t.regex((await page.locator('#webhooks').textContent()) ?? '', /checkout_session\.completed.*Delivered/s);
  await expectAccessible(t, page, 'checkout-session');
  await screenshot(t, page, 'checkout-session');
  // The cards of the live body stand apart as the page's other cards do (1rem).
  const payments = await page.locator('#transactions').boundingBox();
  const timelineBox = await page.locator('#timeline').boundingBox();
  t.true(timelineBox!.y - (payments!.y + payments!.height) >= 15, 'a gap between the payments and the timeline');

  // Cancel from the dashboard: through the API's route, recorded as the user from their address.
  await page.goto(`${dash.url}/dashboard/checkout-sessions/${toCancel.id}`);
  await Promise.all([page.waitForURL(/done=canceled/), page.getByRole('button', { name: 'Cancel session' }).click()]);
  await page.getByText('The session is canceled.').waitFor();
  t.is((await merchant.api.get<Session>(`${SESSIONS}/${toCancel.id}`)).body.status, 'canceled');
  const canceled = (await sessionEvents(dash.weir, toCancel.id)).find((e) => e.type === 'CheckoutSessionCanceled');
  t.like(canceled?.metadata, { actor: `user:${owner.userId}`, clientAddress: '127.0.0.1' });

  // A recovery with a hash that is no hash: named at its field, kept as typed, nothing written.
  await page.goto(`${dash.url}/dashboard/checkout-sessions/${open.id}`);
  const before = (await sessionEvents(dash.weir, open.id)).length;
  await page.getByLabel('Network').selectOption({ label: 'Weir Testnet' });
  await page.getByLabel('Transaction hash').fill('0x1234');
  const [answer] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith('/recover')),
    page.getByRole('button', { name: 'Recover' }).click(),
  ]);
  t.is(answer.status(), 400);
  await page.locator('#field-transactionHash-error').waitFor();
  t.regex((await page.locator('#field-transactionHash-error').textContent()) ?? '', /transaction hash/);
  t.is(await page.getByLabel('Transaction hash').inputValue(), '0x1234');
  t.is(await page.getByLabel('Network').inputValue(), '7357');
  t.is((await sessionEvents(dash.weir, open.id)).length, before);
  t.deepEqual(problems(), [], 'no console error or CSP violation');
});

test('Checkout sessions: a viewer sees a session but cannot cancel it', async (t) => {
  const dash = await startDashboard(t);
  const merchant = await dash.organization();
  const open = (await merchant.api.post<Session>(SESSIONS, sessionRequest())).body;
  const viewer = await dash.user({ role: 'viewer' });
  const page = await dash.signedIn(browser(), viewer);
  await page.goto(`${dash.url}/dashboard/checkout-sessions/${open.id}`);
  t.is(await page.getByRole('button', { name: 'Cancel session' }).count(), 0);
  t.truthy(await page.getByText('Only an admin or owner can act on a session.').count());
  // The form posted anyway (with the viewer's own CSRF token): refused, nothing written.
  const headers = JSON.parse((await page.locator('body').getAttribute('hx-headers')) ?? '{}') as Record<string, string>;
  const refused = await page.request.post(`${dash.url}/dashboard/checkout-sessions/${open.id}/cancel`, {
    headers,
    form: { _csrf: headers['X-CSRF-Token'] ?? '' },
    maxRedirects: 0,
  });
  const status = refused.status();
  t.is(status, 403);
  t.is((await merchant.api.get<Session>(`${SESSIONS}/${open.id}`)).body.status, 'open');
});

test('Checkout sessions: a session paid in part and a payment after its session closed show on Home as needing action; the part-paid one is completed from its page, the late one marked refunded from its own', async (t) => {
  const dash = await startDashboard(t);
  const merchant = await dash.organization();
  const create = async () => (await merchant.api.post<Session>(SESSIONS, sessionRequest('1000000000', 1))).body;

  // A third of the amount reaches the deposit address, and its block is final: the session is incomplete.
  const underpaid = await create();
  const shown = await reveal(dash.weir, merchant.api, underpaid.id);
  const chain = chainPublisher(dash.weir.bus);
  const blockHash = randomHash();
  await chain.transfer({
    to: shown.address,
    amount: (BigInt(shown.amountDueRaw) / 3n).toString(),
    blockNumber: 700_000,
    blockHash,
  });
  await chain.final(700_000, blockHash);
  await eventually(
    async () => ((await getSession(merchant.api, underpaid.id)).status === 'incomplete' ? true : undefined),
    'the part payment',
  );
  // Partly paid, it cannot be canceled: the refusal names the way out.
  const refused = await merchant.api.post<{ code: string; message: string }>(`${SESSIONS}/${underpaid.id}/cancel`);
  t.is(refused.status, 400);
  t.is(refused.body.code, 'status_transition_invalid');
  t.regex(
    refused.body.message,
    new RegExp(`/api/v1/checkout/sessions/${underpaid.id}/complete-partial-checkout-session`),
  );
  // The payer of another session pays after the merchant canceled it.
  const closed = await create();
  const closedShown = await reveal(dash.weir, merchant.api, closed.id);
  t.is((await merchant.api.post(`${SESSIONS}/${closed.id}/cancel`)).status, 200);
  await payLate(dash.weir, merchant.api, closed.id, closedShown);

  const owner = await dash.user({ role: 'owner' });
  const page = await dash.signedIn(browser(), owner);
  const problems = await watchPage(page);
  const needs = page.locator('#needs-action tbody tr');
  t.is(await needs.count(), 2);
  const rowOf = (id: string) => needs.filter({ has: page.locator(`code[title="${id}"]`) });
  t.regex((await rowOf(underpaid.id).textContent()) ?? '', /Underpaid.*3\.333333 USDC of 10\.00 USDC/s);
  t.regex((await rowOf(closed.id).textContent()) ?? '', /Paid after it closed/);
  // Each table's region is named apart from its card (the same name twice: axe's landmark-unique).
  t.deepEqual(
    (await axeOf(page)).violations.filter((v) => v.id === 'landmark-unique').map((v) => v.nodes.length),
    [],
  );
  // The tables fit their card, half the page wide or 390 px (the amounts were cut off), and lead to the sessions.
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    for (const card of ['needs-action', 'recent-payments']) {
      const fits = await page.locator(`#${card} .table-wrap`).evaluate((e) => e.scrollWidth <= e.clientWidth);
      t.true(fits, `${card} fits its card at ${width} px`);
    }
  }
  await page.setViewportSize({ width: 1280, height: 900 });
  await screenshot(t, page, 'home-needing-action');
  for (const id of [underpaid.id, closed.id])
    t.is(await page.locator(`#recent-payments a[href="/dashboard/checkout-sessions/${id}"]`).count(), 1, id);
  await Promise.all([
    page.waitForURL(`**/dashboard/checkout-sessions/${underpaid.id}`),
    rowOf(underpaid.id).getByRole('link').click(),
  ]);
  // Net is what arrived, not the total the session still asks.
  const net = page.locator('#session-summary dt:text-is("Net") + dd');
  t.is(await net.textContent(), '3.333333 USDC');
  t.is(await page.getByRole('button', { name: 'Cancel session' }).count(), 0);
  t.regex((await page.locator('#no-cancel-partly-paid').textContent()) ?? '', /cannot be canceled/);
  await expectAccessible(t, page, 'checkout-session-underpaid');
  await screenshot(t, page, 'checkout-session-underpaid');
  // At 390 px its payments table (3.333333 USDC is wide) scrolls sideways: by keyboard too.
  await page.setViewportSize({ width: 390, height: 900 });
  await expectAccessible(t, page, 'checkout-session-underpaid-390');
  await page.setViewportSize({ width: 1280, height: 900 });
  await Promise.all([
    page.waitForURL(/done=completed/),
    page.getByRole('button', { name: 'Complete with the amount received' }).click(),
  ]);
  await page.getByText('The session is complete with the amount received.').waitFor();
  t.like(await getSession(merchant.api, underpaid.id), { status: 'complete' });
  t.is(await net.textContent(), '3.333333 USDC');
  const completed = (await sessionEvents(dash.weir, underpaid.id)).at(-1);
  t.like(completed?.metadata, { actor: `user:${owner.userId}`, clientAddress: '127.0.0.1' });

  // Home no longer lists it; the late payment stays until someone acts on it.
  await page.goto(`${dash.url}/dashboard`);
  t.is(await needs.count(), 1);
  // Payments are the confirmed transfers, not sessions paid in full: its part, and the late one to
  // the canceled session (the volume beside them counts both too).
  t.is(await page.locator('#payments-count .stat-value').textContent(), '2');
  t.is(
    await page.locator('#payments-count .stat-note').textContent(),
    'Confirmed payments received; a session paid in two transfers counts two',
  );
  t.is(
    await page.locator('#volume .stat-note').textContent(),
    'Money received in confirmed payments, by the day each was confirmed, late ones included',
  );
  t.is(
    await page.locator('#payments-count svg[role="img"]').getAttribute('aria-label'),
    'Confirmed payments per day over the last 30 days',
  );
  t.is(await rowOf(closed.id).count(), 1);

  // The canceled session's page says it was paid late and what to do (its API paymentStatus stays unpaid).
  await Promise.all([
    page.waitForURL(`**/dashboard/checkout-sessions/${closed.id}`),
    rowOf(closed.id).getByRole('link').click(),
  ]);
  t.is(
    await page.locator('#session-summary dt:text-is("Payment") + dd').textContent(),
    'Paid late — needs refund or review',
  );
  // Net is what came before the cancel (nothing), the late money said apart.
  t.regex((await net.textContent()) ?? '', /^0\.00 USDC\s*Late money \(10\.00 USDC\) is not in it\./);
  t.regex(
    (await page.locator('#money-to-settle').textContent()) ?? '',
    /10\.00 USDC arrived after this session was canceled/,
  );
  await expectAccessible(t, page, 'checkout-session-paid-late');
  await screenshot(t, page, 'checkout-session-paid-late');
  await page.getByLabel('Note (optional)').fill('refunded in 0xabc');
  await Promise.all([page.waitForURL(/done=refunded/), page.getByRole('button', { name: 'Mark as refunded' }).click()]);
  await page.getByText('The payment is marked refunded.').waitFor();
  t.regex(
    (await page.locator('#money-to-settle').textContent()) ?? '',
    /marked refunded on .*Note: refunded in 0xabc/s,
  );
  t.like((await getSession(merchant.api, closed.id)).paymentIntent, {
    isMarkRefunded: true,
    markRefundedComment: 'refunded in 0xabc',
  });
  // Settled, it no longer needs action on Home.
  await page.goto(`${dash.url}/dashboard`);
  t.is(await needs.count(), 0);
  t.deepEqual(problems(), []);
});

test('Checkout sessions: a payment still confirming after its session was canceled says so in the list, as Home lists it', async (t) => {
  const dash = await startDashboard(t);
  const merchant = await dash.organization();
  const closed = (await merchant.api.post<Session>(SESSIONS, sessionRequest('1000000000', 1))).body;
  const shown = await reveal(dash.weir, merchant.api, closed.id);
  t.is((await merchant.api.post(`${SESSIONS}/${closed.id}/cancel`)).status, 200);
  // Seen after the cancel, its block not final yet.
  await chainPublisher(dash.weir.bus).transfer({
    to: shown.address,
    amount: shown.amountDueRaw,
    blockNumber: 710_000,
    blockHash: randomHash(),
  });
  await eventually(
    async () => ((await getSession(merchant.api, closed.id)).paymentIntent.transactions.length > 0 ? true : undefined),
    'the payment seen',
  );
  const page = await dash.signedIn(browser(), await dash.user({ role: 'owner' }));
  const problems = await watchPage(page);
  t.regex((await page.locator('#needs-action tbody tr').textContent()) ?? '', /Confirming after it closed/);
  await page.goto(`${dash.url}/dashboard/checkout-sessions`);
  const status = page.locator('#sessions tbody tr td.nowrap').first();
  t.is((await status.innerText()).replace(/\s+/g, ' ').trim(), 'Canceled Confirming after it closed');
  await screenshot(t, page, 'checkout-sessions-confirming-after-close');
  // On a phone the badge goes under the status, whole, not past the card's edge (the table scrolls on to the id).
  await page.setViewportSize({ width: 390, height: 900 });
  const badge = await status.locator('.badge').last().boundingBox();
  const card = await page.locator('#sessions .table-wrap').boundingBox();
  t.true(
    badge !== null && card !== null && badge.x + badge.width <= card.x + card.width,
    'the badge is whole at 390 px',
  );
  t.deepEqual(problems(), []);
});

test('Checkout sessions: a recovery being typed keeps its value and focus through the live refresh when the session is paid meanwhile (with and without moveBefore)', async (t) => {
  const dash = await startDashboard(t);
  const merchant = await dash.organization();
  const owner = await dash.user({ role: 'owner' });
  const activeId = (page: Page) =>
    page.evaluate(
      () =>
        (globalThis as unknown as { document: { activeElement: { id: string } | null } }).document.activeElement?.id,
    );
  // Browsers without Element.moveBefore: htmx puts the kept form back by a plain move, which drops focus.
  for (const moveBefore of [true, false]) {
    const session = (await merchant.api.post<Session>(SESSIONS, sessionRequest('1250000000', 1))).body;
    const page = await dash.signedIn(browser(), owner);
    if (!moveBefore)
      await page.addInitScript({
        content: 'for (const p of [Element, Document, DocumentFragment]) delete p.prototype.moveBefore;',
      });
    const problems = await watchPage(page);
    await page.goto(`${dash.url}/dashboard/checkout-sessions/${session.id}`);
    await page.locator('body[data-live="on"]').waitFor();
    await page.getByLabel('Network').selectOption({ label: 'Weir Testnet' });
    const hash = page.getByLabel('Transaction hash');
    await hash.pressSequentially('0xabc123');
    await hash.press('ArrowLeft');

    await payInFull(dash.weir, merchant.api, session);
    // The refresh is seen: the body now shows the session complete.
    await page.locator('#timeline').getByText('Checkout session completed').waitFor();
    await page.locator('#session-summary .badge', { hasText: 'Complete' }).waitFor();

    t.is(await hash.inputValue(), '0xabc123', `the hash as typed (moveBefore ${moveBefore})`);
    t.is(await page.getByLabel('Network').inputValue(), '7357');
    t.is(await activeId(page), 'field-transactionHash', `still focused (moveBefore ${moveBefore})`);
    // Typing goes on where the caret was.
    await page.keyboard.type('d');
    t.is(await hash.inputValue(), '0xabc12d3');
    t.deepEqual(problems(), []);
  }
});

test('Checkout sessions in a time zone: the days of Created from / to are days there, in the list and in its CSV download; an unknown zone is named at its field, and the download refuses it with a 400', async (t) => {
  // 22:00 on 29 November in New York (03:00Z on the 30th), then 23:00 on 30 November there (04:00Z on 1 December).
  const dash = await startDashboard(t, { clock: createManualClock(Date.parse('2026-11-30T03:00:00Z')) });
  const merchant = await dash.organization();
  const made = async () => (await merchant.api.post<Session>(SESSIONS, sessionRequest('1250000000', 1))).body;
  const late29 = await made();
  dash.clock.set(Date.parse('2026-12-01T04:00:00Z'));
  const late30 = await made();
  const owner = await dash.user({ role: 'owner' });
  const page = await dash.signedIn(browser(), owner);
  await page.goto(`${dash.url}/dashboard/checkout-sessions?from=2026-11-30&to=2026-11-30`);
  const ids = () => page.locator('#sessions tbody tr td code').evaluateAll((els) => els.map((e) => e.title));
  t.deepEqual(await ids(), [late29.id], 'UTC days by default');
  const created = () => page.locator('#sessions tbody tr td time').first().textContent();
  t.is(await created(), '30 Nov, 03:00 UTC', 'times in UTC by default');

  await page.getByLabel('Time zone').selectOption('America/New_York');
  await Promise.all([
    page.waitForURL((u) => u.searchParams.get('timezone') === 'America/New_York'),
    page.getByRole('button', { name: 'Apply' }).click(),
  ]);
  t.deepEqual(await ids(), [late30.id], '30 November in New York');
  // Its time is New York's too (23:00 on the 30th, 04:00Z on 1 December), named by the zone's short name.
  t.is(await created(), '30 Nov, 23:00 GMT-5');
  const instant = await page.locator('#sessions tbody tr td time').first().getAttribute('datetime');
  t.is(new Date(instant ?? '').toISOString(), '2026-12-01T04:00:00.000Z', 'the <time> keeps the instant');
  const download = await page.getByRole('link', { name: 'Download CSV' }).getAttribute('href');
  t.is(download, '/dashboard/checkout-sessions/export?from=2026-11-30&to=2026-11-30&timezone=America%2FNew_York');
  const csv = await page.request.get(`${dash.url}${download}`);
  t.is(csv.status(), 200);
  // Dated by the zone's day: 04:00Z on 1 December is 30 November in New York.
  t.is(csv.headers()['content-disposition'], 'attachment; filename="checkout-sessions-2026-11-30.csv"');
  const rows = (await csv.text()).trim().split('\n').slice(1);
  t.deepEqual(
    rows.map((row) => row.split(',')[0]),
    [late30.id],
  );
  await page.locator('body[data-live="on"]').waitFor();
  await expectAccessible(t, page, 'checkout-sessions in a time zone');
  await screenshot(t, page, 'checkout-sessions-time-zone');

  // A zone that is none: the list says so at the field (and reads the days in New York's, the zone chosen
  // above and kept as the dashboard's); the download is a 400 naming it.
  const bad = await page.goto(
    `${dash.url}/dashboard/checkout-sessions?from=2026-11-30&to=2026-11-30&timezone=Mars%2FOlympus`,
  );
  t.is(bad?.status(), 400);
  t.regex((await page.locator('#field-timezone-error').textContent()) ?? '', /^Mars\/Olympus is not a time zone/);
  t.deepEqual(await ids(), [late30.id]);
  await expectAccessible(t, page, 'checkout-sessions with an unknown time zone');
  const refused = await page.request.get(`${dash.url}/dashboard/checkout-sessions/export?timezone=Mars%2FOlympus`);
  t.is(refused.status(), 400);
  t.regex(await refused.text(), /Mars\/Olympus is not a time zone/);
});

test("an overpaid session's page gives the excess and the payer's whole address to refund it to, readable on a phone", async (t) => {
  const dash = await startDashboard(t);
  const merchant = await dash.organization();
  const created = await merchant.api.post<Session>(SESSIONS, sessionRequest('1250000000', 1));
  t.is(created.status, 200, JSON.stringify(created.body));
  const { address, amountDueRaw } = await reveal(dash.weir, merchant.api, created.body.id);
  const chain = chainPublisher(dash.weir.bus);
  const blockHash = randomHash();
  const sent = await chain.transfer({
    to: address,
    amount: String(BigInt(amountDueRaw) + 2_500_000n),
    blockNumber: 77,
    blockHash,
  });
  await chain.final(77, blockHash);
  await eventually(async () => {
    const s = (await merchant.api.get<Session & { amountOverpaid: string }>(`${SESSIONS}/${created.body.id}`)).body;
    return s.status === 'complete' && s.amountOverpaid !== '0' ? s : undefined;
  }, 'the session complete and overpaid');

  const page = await dash.signedIn(browser(), await dash.user({ role: 'owner' }));
  const problems = await watchPage(page);
  await page.setViewportSize({ width: 390, height: 900 });
  await page.goto(`${dash.url}/dashboard/checkout-sessions/${created.body.id}`);
  const card = page.locator('#money-to-settle');
  t.regex((await card.textContent()) ?? '', /Excess to refund\s*2\.50 USDC/);
  const payer = card.locator('code.refund-address');
  t.true(await payer.isVisible());
  t.is(await payer.textContent(), sent.from);
  await expectAccessible(t, page, 'checkout-session-overpaid');
  await screenshot(t, page, 'checkout-session-overpaid');
  t.deepEqual(problems(), []);
});
