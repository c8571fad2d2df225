import { readFile } from 'node:fs/promises';
import test from 'ava';
import { CHECKOUT_NOTICES, tryAgainIn } from './page-notices.ts';

test("when to try again follows Retry-After in a person's words, rounded up, singular and plural right", (t) => {
  t.is(tryAgainIn(1), 'Try again in 1 second.');
  t.is(tryAgainIn(5), 'Try again in 5 seconds.');
  t.is(tryAgainIn(59), 'Try again in 59 seconds.');
  t.is(tryAgainIn(60), 'Try again in about a minute.');
  t.is(tryAgainIn(61), 'Try again in 2 minutes.');
  t.is(tryAgainIn(180), 'Try again in 3 minutes.');
  t.is(tryAgainIn(181), 'Try again in 4 minutes.');
  t.is(tryAgainIn(7200), 'Try again in 2 hours.');
  t.is(tryAgainIn(7201), 'Try again in 3 hours.');
  // A fraction or nothing left still asks for a moment's wait, never "0 seconds".
  t.is(tryAgainIn(0), 'Try again in 1 second.');
  t.is(tryAgainIn(2.2), 'Try again in 3 seconds.');
});

test("the checkout page's scripts read every JSON answer through their one guard, and say a missing answer in the server's own words", async (t) => {
  for (const name of ['checkout.js', 'wallet.js', 'solana-wallet.js', 'tron-wallet.js']) {
    const script = await readFile(new URL(`./assets/${name}`, import.meta.url), 'utf8');
    // `answer`: fetch and .json() inside one try; a bare `await res.json()` elsewhere throws on a proxy's HTML page.
    t.is(script.match(/\.json\(\)/g)?.length, 1, `${name} reads JSON only in answer()`);
    t.regex(script, /return \{ ok: res\.ok, body: await res\.json\(\) \};\n\s*\} catch \{\n\s*return null;/, name);
    t.true(script.includes(`'${CHECKOUT_NOTICES.unavailable.message}'`), `${name} says the unavailable notice's words`);
    if (name === 'checkout.js') t.true(script.includes(`'${CHECKOUT_NOTICES.unavailable.heading}'`));
  }
});
