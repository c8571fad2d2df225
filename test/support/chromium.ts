import { existsSync } from 'node:fs';
import type { ExecutionContext } from 'ava';
import { chromium, type Browser } from 'playwright-core';

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
