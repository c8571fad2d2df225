import test, { type ExecutionContext } from 'ava';
import type { Page } from 'playwright-core';
import { apiClient } from '../support/api-client.ts';
import {
  chromiumPerFile,
  type DashboardUser,
  expectAccessible,
  newPage,
  PASSWORD,
  screenshot,
  signIn,
  startDashboard,
  watchPage,
} from '../support/dashboard.ts';
import { recordingMailer } from '../support/recording-mailer.ts';
import { totpAt, totpCodeFor, wrongTotpCode } from '../support/totp.ts';

const browser = chromiumPerFile(test);

const TEAM = '/dashboard/settings/team';
const SECURITY = '/dashboard/settings/security';

type Member = { id: string; email: string; name: string | null; role: string; twoFactorEnabled: boolean };
type Invite = { id: string; email: string; status: string };
type Dashboard = Awaited<ReturnType<typeof startDashboard>>;

/** The labels of the nav as the page shows it. */
const navOf = async (page: Page) =>
  (await page.locator('nav[aria-label="Dashboard"] a').allTextContents()).map((s) => s.trim());

/**
 * Moves Weir's clock on by two minutes: a new TOTP step (a code of the last one is spent), and time
 * for the sign-in throttle to give back the tries this file's wrong codes take on purpose.
 */
const nextStep = (dash: Dashboard) => dash.clock.advanceBy(120_000);

/** The code the user's authenticator app shows now (by the test's own RFC 6238, on Weir's clock). */
const codeNow = (dash: Dashboard, secret: string) => totpCodeFor(secret, dash.clock.now());

/** The page's width at 390 px: nothing may widen it past the window (a table scrolls inside its card). */
async function widthAt390(page: Page): Promise<number> {
  const size = page.viewportSize();
  await page.setViewportSize({ width: 390, height: 900 });
  const width = await page.evaluate(
    () =>
      (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement
        .scrollWidth,
  );
  if (size) await page.setViewportSize(size);
  return width;
}

/** Signs out from any signed-in page. */
async function signOut(page: Page): Promise<void> {
  await Promise.all([page.waitForURL(/\/dashboard\/login/), page.getByRole('button', { name: 'Sign out' }).click()]);
}

/** The password step of signing in, for a user with two-factor on: it answers the second step's page. */
async function passwordStep(page: Page, url: string, user: Pick<DashboardUser, 'email' | 'password'>): Promise<void> {
  await page.goto(`${url}/dashboard/login`);
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Two-factor sign-in' }).waitFor();
}

/** Answers the second step; `signedIn` says whether it should let the user in. */
async function secondStep(page: Page, code: string, signedIn: boolean): Promise<void> {
  await page.getByLabel('Authentication code').fill(code);
  await page.getByRole('button', { name: 'Verify and sign in' }).click();
  if (signedIn) await page.getByRole('heading', { name: 'Home', level: 1 }).waitFor();
  else await page.getByText('That code is not right, or was used already.').waitFor();
}

/**
 * Turns two-factor on from the security page as a person would: the key read off the page (as
 * typed into an app), a wrong code refused, the right one with the password; answers the key and
 * the recovery codes shown once.
 */
async function enrol(t: ExecutionContext, page: Page, dash: Dashboard, shots = false) {
  await page.goto(`${dash.url}${SECURITY}`);
  await page.getByRole('link', { name: 'Set up two-factor' }).click();
  const secret = ((await page.locator('#totp-secret').textContent()) ?? '').replace(/\s/g, '');
  t.regex(secret, /^[A-Z2-7]{32}$/, '160 bits in base32');
  t.is(await page.locator('img.totp-qr').count(), 1);
  if (shots) {
    await expectAccessible(t, page, 'two-factor-setup');
    await screenshot(t, page, 'two-factor-setup');
  }
  await page.getByLabel('Code the app shows').fill(wrongTotpCode(secret, dash.clock.now()));
  await page.getByLabel('Your password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Turn on two-factor' }).click();
  await page.getByText('That code is not right: enter the one the app shows now.').waitFor();
  t.is(
    ((await page.locator('#totp-secret').textContent()) ?? '').replace(/\s/g, ''),
    secret,
    'the same key again after a wrong code',
  );
  await page.getByLabel('Code the app shows').fill(codeNow(dash, secret));
  await page.getByLabel('Your password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Turn on two-factor' }).click();
  await page.getByRole('heading', { name: 'Two-factor is on' }).waitFor();
  const recoveryCodes = await page.locator('ol.recovery-codes code').allTextContents();
  t.is(recoveryCodes.length, 10);
  for (const code of recoveryCodes) t.regex(code, /^[A-Z2-7]{4}(-[A-Z2-7]{4}){3}$/);
  return { secret, recoveryCodes };
}

test("the test's TOTP is RFC 6238's: the RFC's SHA-1 test vectors", (t) => {
  const key = Buffer.from('12345678901234567890');
  t.is(totpAt(key, 59, 8), '94287082');
  t.is(totpAt(key, 1111111109, 8), '07081804');
  t.is(totpAt(key, 20000000000, 8), '65353130');
});

test('Team: the owner invites by mail link (bad address named, nothing sent), the invitee joins and signs in, the owner changes their role and removes them; the nav shows each role what it may open; a viewer cannot create a key', async (t) => {
  const mail = recordingMailer();
  const dash = await startDashboard(t, { mailer: mail.mailer });
  const merchant = await dash.organization();
  const owner = await dash.user({ role: 'owner', email: 'ada@harbour.example' });
  const page = await dash.signedIn(browser(), owner);
  const problems = await watchPage(page);
  t.deepEqual(
    await navOf(page),
    [
      'Home',
      'Checkout sessions',
      'Invoices',
      'Subscriptions',
      'Payment links',
      'Products',
      'Customers',
      'Promo codes',
      'Developers',
      'Settings',
      'Recovery',
      'Faucet',
      'Audit trail',
    ],
    "an owner's nav: every screen",
  );
  await page.goto(`${dash.url}${TEAM}`);

  // A bad address: named at the field, the form kept as typed, nothing written or mailed.
  await page.getByLabel('Email', { exact: true }).fill('grace at harbour');
  await page.getByLabel('Role', { exact: true }).selectOption('developer');
  await page.getByRole('button', { name: 'Send invite' }).click();
  await page.locator('#field-email-error').waitFor();
  t.regex((await page.locator('#field-email-error').textContent()) ?? '', /email address/);
  t.is(await page.getByLabel('Email', { exact: true }).inputValue(), 'grace at harbour');
  t.is(await page.getByLabel('Role', { exact: true }).inputValue(), 'developer');
  t.is(mail.sent.length, 0);
  t.deepEqual((await merchant.live.get<Invite[]>('/api/v1/invites')).body, []);

  await page.getByLabel('Email', { exact: true }).fill('grace@harbour.example');
  await page.getByRole('button', { name: 'Send invite' }).click();
  await page.getByText('Invite sent.').waitFor();
  t.is(mail.sent.length, 1);
  t.is(mail.sent[0]!.to, 'grace@harbour.example');
  const link = /https?:\/\/\S+\/dashboard\/invite\/[0-9a-f-]{36}\.[A-Za-z0-9_-]{43}/.exec(mail.sent[0]!.text)?.[0];
  t.truthy(link, 'the mail carries the link');
  const invitePath = new URL(link!).pathname;
  const pending = page.locator('#invites li', { hasText: 'grace@harbour.example' });
  t.regex((await pending.textContent()) ?? '', /pending.*Developer.*link works until/s);
  t.false((await page.content()).includes(invitePath), 'the link is not on the page');
  await expectAccessible(t, page, 'team');
  await screenshot(t, page, 'team');
  t.is(await widthAt390(page), 390, 'the team page fits a phone');

  // The invitee follows the link (a browser of their own), chooses a password and is signed in.
  const invitee = await newPage(t, browser());
  const inviteeProblems = await watchPage(invitee);
  await invitee.goto(`${dash.url}${invitePath}`);
  await invitee.getByRole('heading', { name: 'Join Harbour Coffee Roasters' }).waitFor();
  t.is(await invitee.getByLabel('Email').inputValue(), 'grace@harbour.example');
  await expectAccessible(t, invitee, 'invite-acceptance');
  await screenshot(t, invitee, 'invite-acceptance');
  await invitee.getByLabel('Your name').fill('Grace Hopper');
  await invitee.getByLabel('Password', { exact: true }).fill('a good long password');
  await invitee.getByLabel('Password again').fill('a different password');
  await invitee.getByRole('button', { name: 'Join and sign in' }).click();
  await invitee.getByText('The two passwords differ.').waitFor();
  t.is(await invitee.getByLabel('Your name').inputValue(), 'Grace Hopper', 'kept as typed');
  await invitee.getByLabel('Password', { exact: true }).fill('a good long password');
  await invitee.getByLabel('Password again').fill('a good long password');
  await invitee.getByRole('button', { name: 'Join and sign in' }).click();
  await invitee.getByRole('heading', { name: 'Home', level: 1 }).waitFor();
  t.is(await invitee.locator('.user-email').textContent(), 'grace@harbour.example');
  t.is(await invitee.locator('.user-role').textContent(), 'developer');
  t.deepEqual(
    await navOf(invitee),
    [
      'Home',
      'Checkout sessions',
      'Invoices',
      'Subscriptions',
      'Payment links',
      'Products',
      'Customers',
      'Promo codes',
      'Developers',
      'Settings',
      'Faucet',
      'Audit trail',
    ],
    "a developer's nav: no Recovery (an admin's)",
  );
  t.is((await invitee.goto(`${dash.url}/dashboard/recovery`))?.status(), 403, 'and the page refuses it all the same');
  // The link is spent; signing in again takes the new password alone (no two-factor set up).
  const spent = await newPage(t, browser());
  t.is((await spent.goto(`${dash.url}${invitePath}`))?.status(), 404);
  await spent.getByText('This invite link does not work').waitFor();
  await invitee.goto(`${dash.url}/dashboard`);
  await signOut(invitee);
  await signIn(invitee, dash.url, { email: 'grace@harbour.example', password: 'a good long password' });
  await invitee.getByRole('heading', { name: 'Home', level: 1 }).waitFor();

  // The owner sees the member and the accepted invite, and makes them a viewer.
  await page.goto(`${dash.url}${TEAM}`);
  const row = page.locator('#members tbody tr', { hasText: 'grace@harbour.example' });
  t.regex((await row.textContent()) ?? '', /Grace Hopper.*Developer.*Off/s);
  t.regex((await page.locator('#invites li', { hasText: 'grace@harbour.example' }).textContent()) ?? '', /accepted/);
  await row.getByLabel('Role of Grace Hopper').selectOption('viewer');
  await row.getByRole('button', { name: 'Change role' }).click();
  await page.getByText('Role changed.').waitFor();
  const members = (await merchant.live.get<Member[]>('/api/v1/users')).body;
  t.deepEqual(
    members.map((m) => [m.email, m.role]),
    [
      ['ada@harbour.example', 'owner'],
      ['grace@harbour.example', 'viewer'],
    ],
  );

  // As a viewer, on their next page: no Developers, Recovery or Faucet; the key is refused at the server too.
  await invitee.goto(`${dash.url}/dashboard`);
  t.is(await invitee.locator('.user-role').textContent(), 'viewer');
  t.deepEqual(
    await navOf(invitee),
    [
      'Home',
      'Checkout sessions',
      'Invoices',
      'Subscriptions',
      'Payment links',
      'Products',
      'Customers',
      'Promo codes',
      'Settings',
      'Audit trail',
    ],
    "a viewer's nav: reading screens only",
  );
  const keysBefore = (await merchant.api.get<{ count: number }>('/api/v1/api-keys')).body.count;
  t.is((await invitee.goto(`${dash.url}/dashboard/developers`))?.status(), 403);
  await invitee.getByText('Only a developer, admin or owner can do this; you are a viewer.').waitFor();
  const csrf = await invitee.locator('input[name=_csrf]').first().inputValue();
  const refused = await invitee.request.post(`${dash.url}/dashboard/developers/api-keys`, {
    form: { _csrf: csrf, name: 'sneaky', reauth_password: 'a good long password' },
  });
  t.is(refused.status(), 403);
  t.is((await merchant.api.get<{ count: number }>('/api/v1/api-keys')).body.count, keysBefore, 'no key made');
  // Nor may a viewer invite: the team page shows no form, and the server refuses the post.
  await invitee.goto(`${dash.url}${TEAM}`);
  t.is(await invitee.getByRole('button', { name: 'Send invite' }).count(), 0);
  const inviteRefused = await invitee.request.post(`${dash.url}${TEAM}/invites`, {
    form: { _csrf: csrf, email: 'mal@harbour.example', role: 'owner' },
  });
  t.is(inviteRefused.status(), 403);
  t.is(mail.sent.length, 1);

  // The owner cannot demote the last owner (the API's refusal on the page), then removes Grace.
  const self = page.locator('#members tbody tr', { hasText: 'ada@harbour.example' });
  await self.getByLabel(/^Role of /).selectOption('admin');
  await self.getByRole('button', { name: 'Change role' }).click();
  await page.getByText("The organization's last owner; make another member owner first.").waitFor();
  t.is(
    (await merchant.live.get<Member[]>('/api/v1/users')).body[0]!.role,
    'owner',
    'still the owner after the refusal',
  );
  await page
    .locator('#members tbody tr', { hasText: 'grace@harbour.example' })
    .getByRole('button', { name: 'Remove Grace Hopper' })
    .click();
  await page.getByText('Member removed.').waitFor();
  t.is(await page.locator('#members tbody tr', { hasText: 'grace@harbour.example' }).count(), 0);
  t.deepEqual(
    (await merchant.live.get<Member[]>('/api/v1/users')).body.map((m) => m.email),
    ['ada@harbour.example'],
  );
  // Their session ends at their next request.
  await invitee.goto(`${dash.url}/dashboard`);
  t.is(new URL(invitee.url()).pathname, '/dashboard/login');
  t.deepEqual(problems(), []);
  t.deepEqual(inviteeProblems(), []);
});

test('Two-factor: set up on the security page; sign-in then asks for the code; a recovery code works once; new recovery codes replace the old; API keys and webhook endpoints ask for the password before, and for a code after', async (t) => {
  const dash = await startDashboard(t);
  const merchant = await dash.organization();
  const admin = await dash.user({ role: 'admin' });
  const page = await dash.signedIn(browser(), admin);
  const problems = await watchPage(page);
  const keys = async () => (await merchant.api.get<{ count: number }>('/api/v1/api-keys')).body.count;
  const endpoints = async () => (await merchant.api.get<{ count: number }>('/api/v1/webhook-endpoints')).body.count;
  const keysAtStart = await keys();

  // Without two-factor, a new key and a new endpoint ask for the password: a wrong one is asked again on a page of its own.
  await page.goto(`${dash.url}/dashboard/developers`);
  await page.getByLabel('Key name').fill('before two-factor');
  await page.getByLabel('Your password').fill('not my password');
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.getByText('To create an API key, enter your password again.').waitFor();
  await page.getByRole('alert').getByText('That password is not right.').waitFor();
  t.is(await keys(), keysAtStart, 'nothing made before the password');
  await page.getByLabel('Your password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Confirm' }).click();
  t.regex(await page.locator('#secret-key').inputValue(), /^sk_test_/);
  t.is(await keys(), keysAtStart + 1);
  await page.goto(`${dash.url}/dashboard/developers/webhooks/new`);
  await page.getByLabel('Endpoint URL').fill('https://hooks.harbour.example/weir');
  await page.getByLabel('Description').fill('fulfilment');
  await page.getByLabel('invoice.paid').check();
  await page.getByLabel('Your password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Add endpoint' }).click();
  await page.getByText('Endpoint added.').waitFor();
  t.is(await endpoints(), 1);

  // Set up: the key from the page, a wrong code refused, then the recovery codes shown once.
  const { secret, recoveryCodes } = await enrol(t, page, dash, true);
  await expectAccessible(t, page, 'recovery-codes');
  await screenshot(t, page, 'recovery-codes');
  await page.getByRole('link', { name: 'I have saved them' }).click();
  await page.locator('#two-factor').getByText('On', { exact: true }).waitFor();
  t.is(await page.locator('#recovery').getByText('10 of 10 left').count(), 1);
  t.false((await page.content()).includes(recoveryCodes[0]!), 'the codes are not shown again');
  t.like((await merchant.live.get<Member[]>('/api/v1/users')).body[0], { twoFactorEnabled: true });

  // Signing in: the password, then the code; a wrong code is refused and the code of the step just used is spent.
  await signOut(page);
  await passwordStep(page, dash.url, admin);
  await expectAccessible(t, page, 'two-factor-sign-in');
  await screenshot(t, page, 'two-factor-sign-in');
  await secondStep(page, wrongTotpCode(secret, dash.clock.now()), false);
  await secondStep(page, codeNow(dash, secret), false);
  nextStep(dash);
  await secondStep(page, codeNow(dash, secret), true);

  // A recovery code signs in once, typed in lower case without dashes as people do.
  await signOut(page);
  await passwordStep(page, dash.url, admin);
  await secondStep(page, recoveryCodes[3]!.replace(/-/g, '').toLowerCase(), true);
  await signOut(page);
  await passwordStep(page, dash.url, admin);
  await secondStep(page, recoveryCodes[3]!, false);
  nextStep(dash);
  await secondStep(page, codeNow(dash, secret), true);
  await page.goto(`${dash.url}${SECURITY}`);
  t.is(await page.locator('#recovery').getByText('9 of 10 left').count(), 1);

  // New recovery codes: a code from the app first; then the old ones, spent or not, no longer work.
  await page.getByRole('button', { name: 'Get new recovery codes' }).click();
  await page.getByText('To get new recovery codes, enter the 6-digit code your authenticator app shows.').waitFor();
  t.is(await page.getByLabel('Your password').count(), 0, 'with two-factor on, a code is asked, not the password');
  await page.getByLabel('Code from your authenticator app').fill(codeNow(dash, secret));
  await page.getByRole('button', { name: 'Confirm' }).click();
  await page.getByText('That code is not right, or was used already.').waitFor();
  nextStep(dash);
  await page.getByLabel('Code from your authenticator app').fill(codeNow(dash, secret));
  await page.getByRole('button', { name: 'Confirm' }).click();
  await page.getByRole('heading', { name: 'New recovery codes' }).waitFor();
  const renewed = await page.locator('ol.recovery-codes code').allTextContents();
  t.is(renewed.length, 10);
  t.deepEqual(
    renewed.filter((code) => recoveryCodes.includes(code)),
    [],
  );
  await expectAccessible(t, page, 'recovery-codes-renewed');
  await screenshot(t, page, 'recovery-codes-renewed');
  await page.goto(`${dash.url}${SECURITY}`);
  t.is(await page.locator('#recovery').getByText('10 of 10 left').count(), 1);
  await signOut(page);
  await passwordStep(page, dash.url, admin);
  await secondStep(page, recoveryCodes[0]!, false);
  await secondStep(page, renewed[0]!, true);

  // With two-factor on, a new key and a new endpoint ask for a code from the app, in the form itself.
  await page.goto(`${dash.url}/dashboard/developers`);
  await page.getByLabel('Key name').fill('after two-factor');
  await page.getByLabel('Code from your authenticator app').fill(wrongTotpCode(secret, dash.clock.now()));
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.getByRole('alert').getByText('That code is not right, or was used already.').waitFor();
  t.is(await keys(), keysAtStart + 1, 'no key for a wrong code');
  await page.getByLabel('Code from your authenticator app').fill(recoveryCodes[1]!.replace(/-/g, ''));
  await page.getByRole('button', { name: 'Confirm' }).click();
  await page.getByRole('alert').getByText('That code is not right, or was used already.').waitFor();
  nextStep(dash);
  await page.getByLabel('Code from your authenticator app').fill(codeNow(dash, secret));
  await page.getByRole('button', { name: 'Confirm' }).click();
  const secretKey = await page.locator('#secret-key').inputValue();
  t.is((await apiClient(dash.url, secretKey).get('/api/v1/api-keys')).status, 200, 'the key made after the code works');
  t.is(await keys(), keysAtStart + 2);
  await page.goto(`${dash.url}/dashboard/developers/webhooks/new`);
  await page.getByLabel('Endpoint URL').fill('https://hooks.harbour.example/second');
  await page.getByLabel('Description').fill('accounting');
  await page.getByLabel('invoice.paid').check();
  nextStep(dash);
  await page.getByLabel('Code from your authenticator app').fill(codeNow(dash, secret));
  await page.getByRole('button', { name: 'Add endpoint' }).click();
  await page.getByText('Endpoint added.').waitFor();
  t.is(await endpoints(), 2);
  // The endpoint's page tells what its protected actions will ask of this user: a code, not the password.
  for (const card of ['#signing-secret', '#endpoint-settings'])
    t.regex((await page.locator(card).textContent()) ?? '', /6-digit code your authenticator app shows/, card);

  // Turning it off takes a code too; then signing in is the password alone again.
  await page.goto(`${dash.url}${SECURITY}`);
  await expectAccessible(t, page, 'security');
  await screenshot(t, page, 'security');
  t.is(await widthAt390(page), 390, 'the security page fits a phone');
  nextStep(dash);
  await page.getByLabel('Code from your authenticator app').fill(codeNow(dash, secret));
  await page.getByRole('button', { name: 'Turn off two-factor' }).click();
  await page.getByText('Two-factor sign-in is off.').waitFor();
  await signOut(page);
  await signIn(page, dash.url, admin);
  await page.getByRole('heading', { name: 'Home', level: 1 }).waitFor();
  t.deepEqual(problems(), []);
});

test('Two-factor required: the owner requires it (after turning it on themselves); a member without it is sent to set it up before anything else, then gets in', async (t) => {
  const dash = await startDashboard(t);
  const owner = await dash.user({ role: 'owner' });
  const page = await dash.signedIn(browser(), owner);
  const problems = await watchPage(page);
  await page.goto(`${dash.url}${SECURITY}`);
  await page.getByRole('button', { name: 'Require two-factor for everyone' }).click();
  await page.getByText('Turn on two-factor for yourself first').waitFor();
  await enrol(t, page, dash);
  await page.goto(`${dash.url}${SECURITY}`);
  await page.getByRole('button', { name: 'Require two-factor for everyone' }).click();
  await page.getByText('Every member now signs in with two factors').waitFor();
  t.is(await page.locator('#requirement').getByText('Required', { exact: true }).count(), 1);

  const developer = await dash.user({ role: 'developer' });
  const member = await newPage(t, browser());
  const memberProblems = await watchPage(member);
  await signIn(member, dash.url, developer);
  t.is(new URL(member.url()).pathname, SECURITY, 'sent to set it up at sign-in');
  await member.getByText('Your organization requires two-factor sign-in. Set it up to use the dashboard.').waitFor();
  t.is(await member.getByRole('button', { name: /two-factor for everyone/ }).count(), 0, 'only an owner changes it');
  await member.getByText('Only an owner can change this.').waitFor();
  await expectAccessible(t, member, 'security-required');
  await screenshot(t, member, 'security-required');
  await member.goto(`${dash.url}/dashboard/developers`);
  t.is(new URL(member.url()).pathname, SECURITY, 'every other page sends them back');
  const csrf = await member.locator('input[name=_csrf]').first().inputValue();
  const refused = await member.request.post(`${dash.url}/dashboard/developers/api-keys`, {
    form: { _csrf: csrf, name: 'early', reauth_password: PASSWORD },
  });
  t.is(refused.status(), 403, 'and a form posted anyway is refused');

  const { secret } = await enrol(t, member, dash);
  await member.getByRole('link', { name: 'I have saved them' }).click();
  await member.goto(`${dash.url}/dashboard/developers`);
  await member.getByRole('heading', { name: 'Developers', level: 1 }).waitFor();
  // Their next sign-in asks for the code.
  await signOut(member);
  await passwordStep(member, dash.url, developer);
  nextStep(dash);
  await secondStep(member, codeNow(dash, secret), true);

  // The owner lifts the requirement.
  await page.goto(`${dash.url}${SECURITY}`);
  await page.getByRole('button', { name: 'Stop requiring two-factor' }).click();
  await page.getByText('Two-factor sign-in is no longer required.').waitFor();
  t.deepEqual(problems(), []);
  t.deepEqual(memberProblems(), []);
});
