import anyTest, { type TestFn } from 'ava';
import {
  getBase64Decoder,
  getBase64EncodedWireTransaction,
  getBase64Encoder,
  getTransactionDecoder,
  signTransaction,
} from '@solana/kit';
import { launchChromium, screenshotsWithAxe } from '../support/chromium.ts';
import { startSolanaWeir } from '../support/solana-weir.ts';

/*
 * "Pay with a Solana wallet" on the hosted page in Chromium: a Wallet Standard wallet injected into
 * the page (as a browser extension registers one) signs with a test key in the test process and sends
 * to the local Solana; the follower sees it at confirmed and the session completes at finalized.
 */
type World = Awaited<ReturnType<typeof startSolanaWeir>>;
const test = anyTest as TestFn<{ w: World }>;
test.before(async (t) => {
  t.context = { w: await startSolanaWeir() };
});
test.after.always((t) => t.context.w?.teardown());

/** A Wallet Standard wallet for `address` whose signing is `window.weirSolanaSign` (the test's key). */
const injectedSolanaWallet = (address: string) => `(() => {
  const account = { address: ${JSON.stringify(address)}, publicKey: new Uint8Array(32), chains: ['solana:localnet'], features: ['solana:signAndSendTransaction'] };
  const wallet = {
    version: '1.0.0', name: 'Test Solana Wallet', icon: 'data:image/svg+xml;base64,PHN2Zy8+', chains: ['solana:localnet'], accounts: [],
    features: {
      'standard:connect': { version: '1.0.0', connect: async () => { wallet.accounts = [account]; return { accounts: [account] }; } },
      'solana:signAndSendTransaction': { version: '1.0.0', supportedTransactionVersions: ['legacy', 0],
        signAndSendTransaction: async (...inputs) => Promise.all(inputs.map(async (input) => {
          window.weirSolanaRequests = [...(window.weirSolanaRequests || []), { chain: input.chain, account: input.account.address }];
          const signature = await window.weirSolanaSign(btoa(String.fromCharCode(...input.transaction)));
          return { signature: Uint8Array.from(atob(signature), (c) => c.charCodeAt(0)) };
        })) },
    },
  };
  const callback = ({ register }) => register(wallet);
  window.addEventListener('wallet-standard:app-ready', ({ detail }) => callback(detail));
  window.dispatchEvent(new CustomEvent('wallet-standard:register-wallet', { detail: callback }));
})();`;

test('a Solana wallet (Wallet Standard) pays the hosted checkout: signed by the payer, seen, completed', async (t) => {
  const { w } = t.context;
  const s = await w.session('usdc', '1250000000'); // 12.5 USDC
  const payer = await w.chain.newPayer();
  const browser = await launchChromium(t);
  const context = await browser.newContext({ viewport: { width: 390, height: 900 } });
  const sent: string[] = [];
  await context.exposeFunction('weirSolanaSign', async (base64: string) => {
    const unsigned = getTransactionDecoder().decode(getBase64Encoder().encode(base64));
    const signed = await signTransaction([payer.signer.keyPair], unsigned);
    const signature = await w.chain.rpc
      .sendTransaction(getBase64EncodedWireTransaction(signed), { encoding: 'base64' })
      .send();
    sent.push(signature);
    return getBase64Decoder().decode(signed.signatures[payer.address]!);
  });
  await context.addInitScript(injectedSolanaWallet(payer.address));
  const page = await context.newPage();
  const url = (await w.get(s.id)) as unknown as { url?: string };
  await page.goto(url.url ?? `${w.weir.url}/checkout/${s.id}`);
  await page.getByRole('button', { name: /USDC/ }).click();
  await page.locator('#solana-wallet-actions[data-ready="true"]').waitFor({ state: 'attached' });
  // The Solana state of the page (Solana Pay link and QR, the wallet button) at both widths, checked by axe.
  await screenshotsWithAxe(t, page, 'solana');
  await page.getByRole('button', { name: 'Pay with a Solana wallet' }).click();
  const status = page.locator('.solana-wallet-message');
  await page.locator('.solana-wallet-message', { hasText: 'sent' }).waitFor({ state: 'attached' });
  t.regex((await status.textContent()) ?? '', /^Payment sent/);
  t.deepEqual(
    await page.evaluate(() => (globalThis as unknown as { weirSolanaRequests: unknown }).weirSolanaRequests),
    [{ chain: 'solana:localnet', account: payer.address }],
  );
  t.is(sent.length, 1);
  const done = await w.seenThenFinalized(s.id, (x) => x.status === 'complete', 'completion');
  t.is(done.transactionHash, sent[0]!);
  t.is(done.paymentIntent.transactions[0]!.amountRaw, '12500000');
});
