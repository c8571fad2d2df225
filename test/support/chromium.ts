import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import type { ExecutionContext } from 'ava';
import { chromium, type Browser, type Page } from 'playwright-core';

/** Debian's Chromium, which the browser tests drive through playwright-core. */
export const CHROMIUM = '/usr/bin/chromium';

/** A headless Chromium, closed when the test ends. */
export async function launchChromium(t: ExecutionContext): Promise<Browser> {
  t.true(existsSync(CHROMIUM), 'Chromium is required for this test: apt-get install chromium (.ci/run installs it)');
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-quic',
      '--no-first-run',
    ],
  });
  t.teardown(() => browser.close());
  return browser;
}

/**
 * A new folder under the temp dir for a test's screenshots: removed when the test passes, kept (its
 * path logged) when it fails, so a passing run leaves nothing behind and a failing one its pictures.
 */
export async function screenshotFolder(t: ExecutionContext, prefix: string): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), prefix));
  t.teardown(async () => {
    if (t.passed) await rm(folder, { recursive: true, force: true });
    else t.log(`screenshots kept: ${folder}`);
  });
  return folder;
}

/**
 * The page as it is now at 1280 and 390 px: a full-page screenshot of each (in a screenshotFolder)
 * and axe run at each width, asserting no serious or critical violation.
 */
export async function screenshotsWithAxe(t: ExecutionContext, page: Page, name: string): Promise<void> {
  const shots = await screenshotFolder(t, `weir-${name}-page-`);
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    await page.screenshot({ path: join(shots, `${name}-${width}.png`), fullPage: true });
    const { violations } = await axeOf(page);
    t.deepEqual(
      violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id),
      [],
      `axe at ${width} px`,
    );
  }
}

/**
 * axe-core on `page` as it is. Without frames it runs in the page itself (legacy mode): the default
 * opens a blank page and injects axe twice more, twice the time, to find the same; with frames (the
 * branding preview) it takes the default, which also looks inside them.
 */
export async function axeOf(page: Page) {
  const builder = new AxeBuilder({ page });
  return ((await page.locator('iframe').count()) === 0 ? builder.setLegacyMode() : builder).analyze();
}
