import test from 'ava';
import { guardedPage } from '../support/dashboard-guarded-page.tsx';
import { sessionRequest } from '../support/weir-harness.ts';
import { watchPage } from '../support/dashboard.ts';
import {
  chromiumPerFile,
  expectAccessible,
  newPage,
  PASSWORD,
  screenshot,
  signIn,
  startDashboard,
} from '../support/dashboard.ts';

const browser = chromiumPerFile(test);

test('first run: the setup token issued at start makes the first owner of a new organization, signs them in, and then works no more; it travels in POST bodies only, never in an address', async (t) => {
  const dash = await startDashboard(t);
  const token = dash.weir.dashboardSetupToken;
  t.regex(token ?? '', /^[A-Za-z0-9_-]{32}$/);
  const page = await newPage(t, browser());
  const problems = await watchPage(page);
  // Every address the browser asks for: what history, referrers and request logs hold.
  const addresses: string[] = [];
  page.on('request', (request) => addresses.push(request.url(), request.headers().referer ?? ''));

  // The token as typed into the page (the console line names the page and the token apart). The
  // dashboard's address leads there while no one can sign in, not to a sign-in form.
  await page.goto(`${dash.url}/dashboard`);
  t.is(new URL(page.url()).pathname, '/dashboard/setup');
  t.false((await page.content()).includes('Harbour'), 'nothing of the organizations shows before the token');
  await page.getByLabel('Setup token').fill('wrong');
  const wrong = page.waitForResponse(
    (r) => r.url() === `${dash.url}/dashboard/setup` && r.request().method() === 'POST',
  );
  await page.getByRole('button', { name: 'Continue' }).click();
  t.is((await wrong).status(), 403);
  await page.getByText('That is not the setup token Weir issued at start.').waitFor();
  await screenshot(t, page, 'setup-token-wrong');
  await expectAccessible(t, page, 'setup-token-wrong');
  await page.getByLabel('Setup token').fill(token!);
  const right = page.waitForRequest((r) => r.url() === `${dash.url}/dashboard/setup` && r.method() === 'POST');
  await page.getByRole('button', { name: 'Continue' }).click();
  const body = new URLSearchParams((await right).postData() ?? '');
  t.is(body.get('token'), token, 'sent in the body');
  t.truthy(body.get('_csrf'), 'with the CSRF token of the forms before sign-in');
  await page.getByLabel("New organization's name").waitFor();
  t.is(page.url(), `${dash.url}/dashboard/setup`);
  await screenshot(t, page, 'setup');
  await expectAccessible(t, page, 'setup');
  await page.getByLabel("New organization's name").fill('Harbour Coffee Roasters');
  await page.getByLabel('Your name').fill('Ada Owner');
  await page.getByLabel('Email').fill('ada@harbour.example');
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByLabel('Password again').fill('something else entirely');
  await page.getByRole('button', { name: 'Create owner and sign in' }).click();
  await page.getByText('The two passwords differ.').waitFor();
  t.is(await page.getByLabel('Email').inputValue(), 'ada@harbour.example', 'the form is kept as typed');
  t.is(await dash.weir.readStore.collection('users').count({}), 0, 'nothing written');

  // A link with the token in its address (as Weir once printed) is not taken: the browser is sent
  // straight to the address without it, which asks for the token.
  const linked = await newPage(t, browser());
  await linked.goto(`${dash.url}/dashboard/setup?token=${token}`);
  t.is(linked.url(), `${dash.url}/dashboard/setup`);
  await linked.getByLabel('Setup token').waitFor();
  t.is(await linked.getByLabel("New organization's name").count(), 0);
  t.false((await linked.content()).includes(token!));

  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByLabel('Password again').fill(PASSWORD);
  await page.getByRole('button', { name: 'Create owner and sign in' }).click();
  await page.getByRole('heading', { name: 'Home', level: 1 }).waitFor();
  t.is(await page.locator('.user-email').textContent(), 'ada@harbour.example');
  t.is(await page.locator('.org-name').textContent(), 'Harbour Coffee Roasters');
  t.deepEqual(problems(), []);
  t.deepEqual(
    addresses.filter((address) => address.includes(token!)),
    [],
    'the token is in no address or referrer',
  );

  const again = await newPage(t, browser());
  t.is((await again.goto(`${dash.url}/dashboard/setup`))?.status(), 404);
  await again.getByText('Weir is set up: its dashboard has users. Sign in instead.').waitFor();
  await again.goto(`${dash.url}/dashboard`);
  await again.getByRole('heading', { name: 'Sign in' }).waitFor();
});

test('sign in: a wrong password is refused with the email kept; the right one opens the page asked for; sign-out ends the session', async (t) => {
  const dash = await startDashboard(t);
  const owner = await dash.user({ role: 'owner' });
  const page = await newPage(t, browser());
  const problems = await watchPage(page);

  const first = await page.goto(`${dash.url}/dashboard`);
  t.is(new URL(page.url()).pathname, '/dashboard/login', 'not signed in: sent to the login page');
  const headers = first!.headers();
  t.is(
    headers['content-security-policy'],
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: *; connect-src 'self'; form-action 'self'; base-uri 'none'; object-src 'none'; frame-ancestors 'none'",
  );
  t.like(headers, { 'x-frame-options': 'DENY', 'cache-control': 'no-store' });
  await expectAccessible(t, page, 'login');
  await page.getByLabel('Email').fill(owner.email);
  await page.getByLabel('Password').fill('not the password');
  const refused = page.waitForResponse((r) => r.url().endsWith('/dashboard/login') && r.request().method() === 'POST');
  await page.getByRole('button', { name: 'Sign in' }).click();
  t.is((await refused).status(), 401);
  await page.getByRole('alert').getByText('That email and password do not match a user.').waitFor();
  t.is(await page.getByLabel('Email').inputValue(), owner.email);
  await screenshot(t, page, 'login');

  await page.getByLabel('Password').fill(owner.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Home', level: 1 }).waitFor();
  const cookie = (await page.context().cookies()).find((c) => c.name === 'weir_session')!;
  t.like(cookie, { httpOnly: true, sameSite: 'Strict', path: '/dashboard', secure: false });
  t.true(await page.locator('.test-band').isVisible(), 'test mode is marked');
  await page.locator('body[data-live="on"]').waitFor();
  t.deepEqual(problems(), [], 'no console error, no CSP violation (htmx and the event stream run under the CSP)');

  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL(/\/dashboard\/login$/);
  // The old cookie, sent again, opens nothing.
  const replay = await fetch(`${dash.url}/dashboard`, {
    headers: { cookie: `weir_session=${cookie.value}` },
    redirect: 'manual',
  });
  t.is(replay.status, 303);
  t.regex(replay.headers.get('location') ?? '', /^\/dashboard\/login\?next=/);
});

test('failed sign-ins are throttled per account and per address: past a limit even the right password gets a 429 with the time to wait', async (t) => {
  const dash = await startDashboard(t, {
    dashboard: {
      signInLimits: { perAccount: { perSecond: 1 / 60, burst: 3 }, perAddress: { perSecond: 1 / 10, burst: 5 } },
    },
  });
  const owner = await dash.user();
  const page = await newPage(t, browser());
  for (let i = 0; i < 3; i++) {
    await page.goto(`${dash.url}/dashboard/login`);
    await page.getByLabel('Email').fill(owner.email);
    await page.getByLabel('Password').fill(`wrong ${i}`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
  }
  await page.getByLabel('Password').fill(owner.password);
  const answer = page.waitForResponse((r) => r.request().method() === 'POST');
  await page.getByRole('button', { name: 'Sign in' }).click();
  const throttled = await answer;
  t.is(throttled.status(), 429);
  t.is(await throttled.headerValue('retry-after'), '60');
  await page.getByRole('alert').getByText('Too many failed sign-ins: for this account; try again in 60 s.').waitFor();

  // Per address: failures spread over accounts (an unknown one among them) spend the address's
  // tries, and then even another member's right password from that address waits.
  const other = await dash.user({ role: 'viewer' });
  for (const email of ['nobody@harbour.example', other.email]) {
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('wrong again');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').getByText('That email and password do not match a user.').waitFor();
  }
  await page.getByLabel('Email').fill(other.email);
  await page.getByLabel('Password').fill(other.password);
  const fromAddress = page.waitForResponse((r) => r.request().method() === 'POST');
  await page.getByRole('button', { name: 'Sign in' }).click();
  t.is((await fromAddress).status(), 429);
  await page
    .getByRole('alert')
    .getByText(/Too many failed sign-ins: from this address; try again in \d+ s\./)
    .waitFor();

  dash.clock.advanceBy(60_000);
  await page.getByLabel('Email').fill(owner.email);
  await page.getByLabel('Password').fill(owner.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Home', level: 1 }).waitFor();
  t.pass();
});

/** The Set-Cookie lines of a sign-in through the login form, made with fetch as a browser would. */
async function signInCookies(
  url: string,
  user: { email: string; password: string },
  headers: Record<string, string> = {},
) {
  const form = await fetch(`${url}/dashboard/login`, { headers });
  const formCookies = form.headers.getSetCookie();
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1] ?? '';
  const answer = await fetch(`${url}/dashboard/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      ...headers,
      'content-type': 'application/x-www-form-urlencoded',
      cookie: formCookies.map((c) => c.split(';')[0]).join('; '),
    },
    body: new URLSearchParams({ _csrf: csrf, email: user.email, password: user.password }),
  });
  return { status: answer.status, form: formCookies, signedIn: answer.headers.getSetCookie() };
}

test('the session cookie is Secure when Weir is served over https (its public URL, or a trusted proxy saying so), and not over plain http', async (t) => {
  const secureParts = (line: string | undefined) =>
    (line ?? '')
      .split(';')
      .slice(1)
      .map((p) => p.trim())
      .sort();
  const https = await startDashboard(t, { config: { publicUrl: 'https://pay.harbour.example' } });
  const owner = await https.user();
  const overHttps = await signInCookies(https.url, owner);
  t.is(overHttps.status, 303);
  const session = overHttps.signedIn.find((c) => c.startsWith('weir_session='));
  t.deepEqual(
    secureParts(session).filter((p) => !/^Max-Age|^Expires/i.test(p)),
    ['HttpOnly', 'Path=/dashboard', 'SameSite=Strict', 'Secure'],
  );
  t.true(
    overHttps.form.every((c) => c.includes('; Secure')),
    'the pre-sign-in form cookie too',
  );

  const proxied = await startDashboard(t, { config: { trustProxy: true } });
  const member = await proxied.user();
  const viaProxy = await signInCookies(proxied.url, member, { 'x-forwarded-proto': 'https' });
  t.true(viaProxy.signedIn.find((c) => c.startsWith('weir_session='))?.includes('; Secure'));
  const plain = await signInCookies(proxied.url, member);
  const plainSession = plain.signedIn.find((c) => c.startsWith('weir_session='));
  t.truthy(plainSession);
  t.false(plainSession!.includes('Secure'), 'plain http: a Secure cookie would never come back');
  t.true(plainSession!.includes('HttpOnly') && plainSession!.includes('SameSite=Strict'));
});

test('CSRF: a POST without the token, or with another session’s, is refused and changes nothing; the switch’s own form works', async (t) => {
  const dash = await startDashboard(t);
  const owner = await dash.user();
  const page = await dash.signedIn(browser(), owner);
  const other = await dash.signedIn(browser(), owner);
  const otherToken = await other.locator('input[name="_csrf"]').first().inputValue();

  for (const form of [{ environment: 'live' }, { environment: 'live', _csrf: otherToken }] as Record<
    string,
    string
  >[]) {
    const refused = await page.request.post(`${dash.url}/dashboard/environment`, { form, maxRedirects: 0 });
    t.is(refused.status(), 403);
    t.regex(await refused.text(), /This form has expired or did not come from this dashboard/);
  }
  const htmx = await page.request.post(`${dash.url}/dashboard/environment`, {
    form: { environment: 'live' },
    headers: { 'HX-Request': 'true', 'X-CSRF-Token': 'forged' },
    maxRedirects: 0,
  });
  t.is(htmx.status(), 403);
  await page.reload();
  t.true(await page.locator('.test-band').isVisible(), 'still in test mode');

  await page.getByRole('button', { name: 'Live', exact: true }).click();
  await page.locator('body.live-mode').waitFor();
  t.false(await page.locator('.test-band').isVisible());
  t.is(await page.getByRole('button', { name: 'Live', exact: true }).getAttribute('aria-pressed'), 'true');
});

test('sessions expire on the injected clock: after 30 idle minutes, and 12 hours after sign-in however active', async (t) => {
  const dash = await startDashboard(t);
  const owner = await dash.user();
  const page = await dash.signedIn(browser(), owner);
  dash.clock.advanceBy(29 * 60_000);
  await page.reload();
  t.is(new URL(page.url()).pathname, '/dashboard', 'active within 30 minutes');
  dash.clock.advanceBy(30 * 60_000);
  await page.reload();
  t.is(new URL(page.url()).pathname, '/dashboard/login', 'idle for 30 minutes');

  await signIn(page, dash.url, owner);
  for (let hour = 0; hour < 12; hour++) {
    dash.clock.advanceBy(25 * 60_000);
    await page.reload();
    dash.clock.advanceBy(25 * 60_000);
    await page.reload();
    dash.clock.advanceBy(10 * 60_000);
  }
  t.is(new URL(page.url()).pathname, '/dashboard/login', 'used every 25 minutes, ended after 12 hours');
});

test('roles: a viewer is refused an admin action and a developer action; a developer re-authenticates for a sensitive one', async (t) => {
  const dash = await startDashboard(t, { dashboard: { extraPages: [guardedPage] } });
  const viewer = await dash.signedIn(browser(), await dash.user({ role: 'viewer' }));
  await viewer.goto(`${dash.url}/dashboard/guarded`);
  const refused = viewer.waitForResponse((r) => r.request().method() === 'POST');
  await viewer.getByRole('button', { name: 'Admin action' }).click();
  t.is((await refused).status(), 403);
  await viewer.getByText('Only an admin or owner can do this; you are a viewer.').waitFor();
  await screenshot(t, viewer, 'forbidden');
  await expectAccessible(t, viewer, 'forbidden');
  await viewer.goto(`${dash.url}/dashboard/guarded`);
  await viewer.getByRole('button', { name: 'Create key' }).click();
  await viewer.getByText('Only a developer, admin or owner can do this; you are a viewer.').waitFor();

  const developer = await dash.signedIn(browser(), await dash.user({ role: 'developer' }));
  await developer.goto(`${dash.url}/dashboard/guarded`);
  await developer.getByRole('button', { name: 'Admin action' }).click();
  await developer.getByText('Only an admin or owner can do this; you are a developer.').waitFor();
  await developer.goto(`${dash.url}/dashboard/guarded`);
  await developer.getByRole('button', { name: 'Create key' }).click();
  await developer.getByText('To create an API key, enter your password again.').waitFor();
  await screenshot(t, developer, 'reauthenticate');
  await expectAccessible(t, developer, 'reauthenticate');
  await developer.getByLabel('Your password').fill('not my password');
  await developer.getByRole('button', { name: 'Confirm' }).click();
  await developer.getByRole('alert').getByText('That password is not right.').waitFor();
  await developer.getByLabel('Your password').fill(PASSWORD);
  await developer.getByRole('button', { name: 'Confirm' }).click();
  await developer.waitForURL(/done=CI%20deploys$/);

  const admin = await dash.signedIn(browser(), await dash.user({ role: 'admin' }));
  await admin.goto(`${dash.url}/dashboard/guarded`);
  await admin.getByRole('button', { name: 'Admin action' }).click();
  await admin.waitForURL(/done=admin$/);
  t.pass();
});

test('without JavaScript the forms do the work: sign in, the test/live switch, a bad customer named and a good one made, a session filtered and canceled, sign out', async (t) => {
  const dash = await startDashboard(t);
  const merchant = await dash.organization();
  const owner = await dash.user();
  const session = (
    await merchant.api.post<{ id: string; status: string }>('/api/v1/checkout/sessions', {
      ...sessionRequest(),
      clientReferenceId: 'order-nojs',
    })
  ).body;
  const context = await browser().newContext({ javaScriptEnabled: false, viewport: { width: 390, height: 900 } });
  t.teardown(() => context.close());
  const page = await context.newPage();
  await signIn(page, dash.url, owner);
  await page.getByRole('heading', { name: 'Home', level: 1 }).waitFor();
  t.is(await page.locator('body[data-live="on"]').count(), 0, "no script runs (it would open the page's event stream)");

  // The switch is a form: Live, then Test again.
  await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Live', exact: true }).click()]);
  t.is(await page.locator('body.live-mode').count(), 1);
  await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Test', exact: true }).click()]);
  t.true(await page.locator('.test-band').isVisible());

  await page.goto(`${dash.url}/dashboard/customers/new`);
  await page.getByLabel('Email').fill('ada-at-example');
  await page.getByLabel('Name').fill('Ada Lovelace');
  await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Create customer' }).click()]);
  t.regex((await page.locator('#field-email-error').textContent()) ?? '', /email address/);
  t.is(await page.getByLabel('Name').inputValue(), 'Ada Lovelace');
  await page.getByLabel('Email').fill('ada@example.com');
  await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Create customer' }).click()]);
  const customers = (await merchant.api.get<{ data: { email: string }[] }>('/api/v1/customers')).body.data;
  t.deepEqual(
    customers.map((c) => c.email),
    ['ada@example.com'],
  );

  await page.goto(`${dash.url}/dashboard/checkout-sessions`);
  await page.getByLabel('Search').fill('order-nojs');
  await Promise.all([page.waitForURL(/q=order-nojs/), page.getByRole('button', { name: 'Apply' }).click()]);
  t.is(await page.locator('#sessions tbody tr').count(), 1);
  await page.goto(`${dash.url}/dashboard/checkout-sessions/${session.id}`);
  await Promise.all([page.waitForURL(/done=canceled/), page.getByRole('button', { name: 'Cancel session' }).click()]);
  await page.getByText('The session is canceled.').waitFor();
  t.is((await merchant.api.get<{ status: string }>(`/api/v1/checkout/sessions/${session.id}`)).body.status, 'canceled');
  await Promise.all([page.waitForURL(/\/dashboard\/login/), page.getByRole('button', { name: 'Sign out' }).click()]);
});

test("switching to live on a test invoice's page leads to the live invoices, not to Page not found; on a list it stays on that list", async (t) => {
  const dash = await startDashboard(t);
  const { api } = await dash.organization();
  const owner = await dash.user({ role: 'owner' });
  const customer = (await api.post<{ id: string }>('/api/v1/customers', { email: 'billing@client.example' })).body;
  const invoice = await api.post<{ id: string }>('/api/v1/invoices', {
    customerId: customer.id,
    lineItems: { data: [{ priceData: { currency: 'usdc', unitAmount: '1000000', productData: { name: 'Hours' } } }] },
  });
  t.is(invoice.status, 200, JSON.stringify(invoice.body));
  const page = await dash.signedIn(browser(), owner);
  await page.goto(`${dash.url}/dashboard/invoices/${invoice.body.id}`);
  await Promise.all([
    page.waitForURL(/\/dashboard\/invoices$/),
    page.getByRole('button', { name: 'Live', exact: true }).click(),
  ]);
  await page.locator('body.live-mode').waitFor();
  t.is(await page.getByText('Page not found').count(), 0);
  t.is(await page.getByRole('heading', { level: 1, name: 'Invoices' }).count(), 1);

  await page.goto(`${dash.url}/dashboard/invoices?status=open`);
  await Promise.all([page.waitForURL(/status=open$/), page.getByRole('button', { name: 'Test', exact: true }).click()]);
  await page.locator('.test-band').waitFor();
});
