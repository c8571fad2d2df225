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

test("the checkout page's scripts read every JSON answer through their one shared guard, and say a missing answer in the server's own words", async (t) => {
  const read = (name: string) => readFile(new URL(`./assets/${name}`, import.meta.url), 'utf8');
  const shared = await read('hosted-fetch.js');
  // `answer`: fetch and .json() inside one try; a bare `await res.json()` elsewhere throws on a proxy's HTML page.
  t.is(shared.match(/\.json\(\)/g)?.length, 1);
  t.regex(shared, /return \{ ok: res\.ok, body: await res\.json\(\) \};\n\s*\} catch \{\n\s*return null;/);
  t.true(
    shared.includes(`'${CHECKOUT_NOTICES.unavailable.message}'`),
    "hosted-fetch.js says the unavailable notice's words",
  );
  for (const name of ['checkout.js', 'wallet.js', 'solana-wallet.js', 'tron-wallet.js']) {
    const script = await read(name);
    t.is(script.match(/\.json\(\)/g)?.length, undefined, `${name} reads JSON only through hosted-fetch.js`);
    t.regex(script, /const \{ answer, UNREACHABLE \} = window\.weirHosted;/, name);
    t.false(script.includes(CHECKOUT_NOTICES.unavailable.message), `${name} keeps no copy of the words`);
    if (name === 'checkout.js') t.true(script.includes(`'${CHECKOUT_NOTICES.unavailable.heading}'`));
  }
});
