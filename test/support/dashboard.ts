import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext, TestFn } from 'ava';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import type { WeirConfig } from '../../src/app/config.ts';
import type { Rail } from '../../src/chain-ingest/rail.ts';
import { createTestRail } from '../../src/chain-ingest/test-rail.ts';
import type { WeirOverrides } from '../../src/app/start-weir.ts';
import type { UserRole } from '../../src/actors/user.ts';
import type { Mailer } from '../../src/mail/mailer.ts';
import { createManualClock, type ManualClock } from '../../src/shared/clock.ts';
import { createUser } from '../../src/tenancy/create-user.ts';
import { type Api, payInFull, type Session } from '../api/helpers.ts';
import { eventually } from './api-client.ts';
import { axeOf, CHROMIUM } from './chromium.ts';
import { createMerchant, startTestWeir } from './weir-harness.ts';

/**
 * What the dashboard's browser tests share: a Weir with the test rail on a manual clock (at the
 * real time, so pages read naturally; move it to expire sessions), users made as `weir user create`
 * makes them, one Chromium per test file, sign-in, screenshots at 1280 and 390 px, and axe.
 *
 *     const browser = chromiumPerFile(test);
 *     test('…', async (t) => {
 *       const dash = await startDashboard(t);
 *       const owner = await dash.user({ role: 'owner' });
 *       const page = await dash.signedIn(browser(), owner);
 *       await page.goto(`${dash.url}/dashboard/invoices`);
 *       await screenshot(t, page, 'invoices');
 *       await expectAccessible(t, page, 'invoices');
 *     });
 */
export const PASSWORD = 'correct horse battery staple';

export type DashboardUser = { email: string; password: string; role: UserRole; organizationId: string; userId: string };

/** One headless Chromium for the whole file (launching one per test costs a second each). */
export function chromiumPerFile(test: TestFn): () => Browser {
  let browser: Browser | null = null;
  test.before(async () => {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  });
  test.after.always(async () => {
    await browser?.close();
  });
  return () => {
    if (!browser) throw new Error('chromiumPerFile: the browser starts in test.before');
    return browser;
  };
}

/** A page in its own browser context (its own cookies), closed when the test ends. */
export async function newPage(t: ExecutionContext, browser: Browser, width = 1280): Promise<Page> {
  const context: BrowserContext = await browser.newContext({ viewport: { width, height: 900 } });
  t.teardown(() => context.close());
  return context.newPage();
}

export async function startDashboard(
  t: ExecutionContext,
  options: {
    dashboard?: WeirOverrides['dashboard'];
    clock?: ManualClock;
    config?: Partial<WeirConfig>;
    /** Where mail goes (invites): a recording mailer lets a test follow a link. */
    mailer?: Mailer;
    /** Every log line (JSON), for a test that checks what is logged; dropped otherwise. */
    log?: (line: string) => void;
    /** Rails offered beside the test rail (a second test network). */
    extraRails?: Rail[];
  } = {},
) {
  const clock = options.clock ?? createManualClock(Date.now());
  const weir = await startTestWeir(t, options.config ?? {}, {
    clock,
    dashboard: options.dashboard,
    ...(options.mailer ? { mailer: options.mailer } : {}),
    ...(options.log ? { log: options.log } : {}),
    ...(options.extraRails ? { extraRails: [createTestRail(), ...options.extraRails] } : {}),
  });
  let merchant: Awaited<ReturnType<typeof createMerchant>> | null = null;
  /** The organization users are made in: one per Weir, with test and live keys and a test payment method. */
  const organization = async () => {
    merchant ??= await createMerchant(weir.url, 'Harbour Coffee Roasters');
    return merchant;
  };
  let count = 0;
  return {
    weir,
    url: weir.url,
    clock,
    organization,
    /** A user of the organization (or `organizationId`), created as the CLI creates one. */
    async user(input: { role?: UserRole; email?: string; password?: string; organizationId?: string } = {}) {
      const organizationId = input.organizationId ?? (await organization()).organizationId;
      const role = input.role ?? 'owner';
      const email = input.email ?? `${role}${++count}@harbour.example`;
      const password = input.password ?? PASSWORD;
      const { userId, position } = await createUser(weir.commands, {
        organizationId,
        email,
        role,
        password,
        actor: 'cli',
      });
      if (position !== null) await weir.projections.waitFor(position);
      return { email, password, role, organizationId, userId } satisfies DashboardUser;
    },
    /** A new page signed in as `user`, on Home. */
    async signedIn(browser: Browser, user: DashboardUser, width = 1280): Promise<Page> {
      const page = await newPage(t, browser, width);
      await signIn(page, weir.url, user);
      return page;
    },
  };
}

/** Fills in the login form and waits for the page it leads to. */
export async function signIn(page: Page, url: string, user: Pick<DashboardUser, 'email' | 'password'>) {
  await page.goto(`${url}/dashboard/login`);
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await Promise.all([
    page.waitForURL((u) => u.pathname !== '/dashboard/login'),
    page.getByRole('button', { name: 'Sign in' }).click(),
  ]);
}

/** Where screenshots go: WEIR_SCREENSHOTS, or a folder in the system's temp dir; printed once per run. */
export const SCREENSHOTS = process.env.WEIR_SCREENSHOTS ?? join(tmpdir(), 'weir-dashboard-screenshots');
let announced = false;

/** The page at 1280 and at 390 px wide, full length, as `<name>-1280.png` and `<name>-390.png`; it must fit each width. */
export async function screenshot(t: ExecutionContext, page: Page, name: string): Promise<string[]> {
  await mkdir(SCREENSHOTS, { recursive: true });
  if (!announced) {
    announced = true;
    console.log(`dashboard screenshots: ${SCREENSHOTS}`);
  }
  await expectEnvironmentShown(t, page, name);
  const size = page.viewportSize() ?? { width: 1280, height: 900 };
  const files: string[] = [];
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    const file = join(SCREENSHOTS, `${name}-${width}.png`);
    await page.screenshot({ path: file, fullPage: true });
    files.push(file);
    // Nothing may widen the page past the window (a wide table scrolls inside its card).
    const scrollWidth = await page.evaluate(
      () =>
        (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement
          .scrollWidth,
    );
    t.true(scrollWidth <= width, `${name}: ${scrollWidth} px wide in a ${width} px window`);
  }
  await page.setViewportSize(size);
  t.log(`screenshots: ${files.join(', ')}`);
  return files;
}

/**
 * A signed-in screen (one with the dashboard's nav) has the test/live switch, pressed on the mode
 * it shows, and test mode is marked by its band; the pages before sign-in have neither.
 */
export async function expectEnvironmentShown(t: ExecutionContext, page: Page, name: string): Promise<void> {
  if ((await page.locator('nav[aria-label="Dashboard"]').count()) === 0) return;
  const live = (await page.locator('body.live-mode').count()) > 0;
  const pressed = page.locator('form.env-switch button[aria-pressed="true"]');
  t.is(await pressed.count(), 1, `${name}: the test/live switch`);
  t.is((await pressed.textContent())?.trim(), live ? 'Live' : 'Test', `${name}: the switch shows the mode`);
  t.is(await page.locator('.test-band').isVisible(), !live, `${name}: test mode marked, live not`);
}

/**
 * axe-core on the page as it is: no serious or critical violation (the others are logged); with
 * `anyImpact`, no violation at all (a page already clean of the minor and moderate ones stays so).
 */
export async function expectAccessible(
  t: ExecutionContext,
  page: Page,
  name: string,
  options: { anyImpact?: boolean } = {},
): Promise<void> {
  const results = await axeOf(page);
  const grave = results.violations.filter(
    (v) => options.anyImpact || v.impact === 'serious' || v.impact === 'critical',
  );
  for (const v of results.violations.filter((x) => !grave.includes(x)))
    t.log(`${name}: axe ${v.impact}: ${v.id} (${v.nodes.length})`);
  t.deepEqual(
    grave.map((v) => `${v.impact}: ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join('; ')})`),
    [],
    `${name}: ${options.anyImpact ? 'accessibility violations' : 'serious or critical accessibility violations'}`,
  );
}

/**
 * Every console error, uncaught error and CSP violation of a page from its first script on; an
 * answer's own 4xx status (a refused form, the 403 page), which Chromium logs as a failed
 * resource, is not one.
 */
export async function watchPage(page: Page): Promise<() => string[]> {
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' && !/^Failed to load resource: the server responded with a status of 4\d\d/.test(m.text()))
      problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  await page.exposeFunction('__weirViolation', (text: string) => problems.push(`CSP: ${text}`));
  await page.addInitScript({
    content:
      "document.addEventListener('securitypolicyviolation', (e) => window.__weirViolation(e.violatedDirective + ' ' + e.blockedURI));",
  });
  return () => [...problems];
}

/** The recovery page asked about `transactionHash` on `chainId`: the outcome card's text once it shows. */
export async function recoverOnPage(
  page: Page,
  url: string,
  chainId: number,
  transactionHash: string,
): Promise<string> {
  await page.goto(`${url}/dashboard/recovery`);
  await page.getByLabel('Network').selectOption({ value: String(chainId) });
  await page.getByLabel('Transaction hash').fill(transactionHash);
  await page.getByRole('button', { name: 'Check transaction' }).click();
  const outcome = page.locator('#recovery-outcome');
  await outcome.waitFor();
  return (await outcome.textContent()) ?? '';
}

/** A subscription as the API reads it, with what the subscription screens' tests look at. */
export type ActiveSubscription = {
  id: string;
  status: string;
  customerId: string;
  currentPeriodEnd: string;
  latestInvoiceId: string | null;
};

/**
 * A plan (a product with a monthly price, or every `intervalCount` months) bought through a subscription
 * checkout by `email`, paid in full, and its subscription once active. `beforePaying` runs on the open
 * session (a promotion code applied, which `allowPromotionCodes` lets it take).
 */
export async function paidSubscription(
  t: ExecutionContext,
  weir: Parameters<typeof payInFull>[0],
  api: Api,
  plan: {
    name: string;
    unitAmount: string;
    intervalCount?: number;
    email: string;
    allowPromotionCodes?: boolean;
    beforePaying?: (session: Session) => Promise<void>;
  },
): Promise<{ id: string; session: Session; active: ActiveSubscription }> {
  const product = await api.post<{ defaultPrice: { id: string } }>('/api/v1/products', {
    name: plan.name,
    defaultPriceData: {
      currency: 'usdc',
      unitAmount: plan.unitAmount,
      type: 'recurring',
      interval: 'month',
      ...(plan.intervalCount ? { intervalCount: plan.intervalCount } : {}),
    },
  });
  t.is(product.status, 200, JSON.stringify(product.body));
  const session = await api.post<Session & { subscriptionId: string }>('/api/v1/checkout/sessions', {
    mode: 'subscription',
    successUrl: 'https://shop.example/welcome',
    lineItems: { data: [{ priceId: product.body.defaultPrice.id, quantity: 1 }] },
    customerData: { email: plan.email },
    ...(plan.allowPromotionCodes ? { allowPromotionCodes: true } : {}),
  });
  t.is(session.status, 200, JSON.stringify(session.body));
  await plan.beforePaying?.(session.body);
  await payInFull(weir, api, session.body);
  const id = session.body.subscriptionId;
  const active = await eventually(async () => {
    const read = (await api.get<ActiveSubscription>(`/api/v1/subscriptions/${id}`)).body;
    return read?.status === 'active' ? read : undefined;
  }, 'an active subscription');
  return { id, session: session.body, active };
}

/**
 * The invoice editor open for a new customer's email, and how many customers were made since: the
 * setup of a test that an invoice the API refuses makes no customer for that email.
 */
export async function newInvoiceForNewCustomer(
  dash: Pick<Awaited<ReturnType<typeof startDashboard>>, 'url' | 'signedIn'>,
  browser: Browser,
  user: DashboardUser,
  api: Api,
  email = 'ada@lovelace.example',
): Promise<{ page: Page; problems: () => string[]; customersMade: () => Promise<number> }> {
  const customers = async () => (await api.get<{ count: number }>('/api/v1/customers')).body.count;
  const before = await customers();
  const page = await dash.signedIn(browser, user);
  const problems = await watchPage(page);
  await page.goto(`${dash.url}/dashboard/invoices/new`);
  await page.getByLabel("Or a new customer's email").fill(email);
  return { page, problems, customersMade: async () => (await customers()) - before };
}
