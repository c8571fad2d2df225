import { createHash } from 'node:crypto';
import test, { type ExecutionContext } from 'ava';
import { recoverAddress, type Hex } from 'viem';
import { evmToTron } from '../../src/chain-ingest/tron/address.ts';
import { launchChromium, screenshotsWithAxe } from '../support/chromium.ts';
import { startTronWeir } from '../support/tron-weir.ts';

/*
 * "Pay with TronLink" on the hosted page in Chromium. The provider TronLink injects (TIP-1193
 * `window.tron` with its `tronWeb`) is stood in for by a script: it builds the transaction the page
 * asks for, has the payer's test key sign it (the same signer as a Tron payer's, over its txID)
 * and broadcasts it. No Tron node runs here, so the broadcast checks the signature and makes the
 * same transfer on the local Tron (anvil behind the Tron-flavoured proxy), where Weir sees it.
 */

const DEPTH = 3;

type Built = { contract: string; selector: string; to: string; amount: string | number; from: string };

/**
 * How the stand-in's sendTrx takes its sun: `as given` keeps a decimal string exact; `parseInt` turns
 * it into a JS number, as tronweb 6's sendTrx does (exact only up to 2^53).
 */
type TrxAmounts = 'as given' | 'parseInt';

/** A TIP-1193 provider for `address` whose signing and broadcast are the test's exposed functions. */
const injectedTronLink = (address: string, trx: TrxAmounts = 'as given') => `(() => {
  const hex = (text) => Array.from(new TextEncoder().encode(text), (b) => b.toString(16).padStart(2, '0')).join('');
  const build = async (raw) => {
    // A TRX transfer also carries its amount where tronWeb puts it (a TransferContract's value).
    const shaped = raw.contract === 'TRX' ? { ...raw, contract: [{ parameter: { value: { amount: raw.amount } } }], built: raw } : raw;
    const raw_data_hex = hex(JSON.stringify(shaped));
    return { raw_data: shaped, raw_data_hex, txID: await window.weirTronTxId(raw_data_hex), visible: true };
  };
  const sun = (amount) => (${JSON.stringify(trx)} === 'parseInt' ? parseInt(amount) : amount);
  const tronWeb = {
    defaultAddress: { base58: null },
    transactionBuilder: {
      triggerSmartContract: async (contract, selector, options, params, from) => ({
        result: { result: true },
        transaction: await build({ contract, selector, to: params[0].value, amount: params[1].value, from, feeLimit: options.feeLimit }),
      }),
      sendTrx: async (to, amount, from) => build({ contract: 'TRX', selector: 'TransferContract', to, amount: sun(amount), from }),
    },
    trx: {
      sign: (transaction) => window.weirTronSign(transaction),
      sendRawTransaction: async (signed) => ({ result: true, txid: await window.weirTronBroadcast(signed) }),
    },
  };
  window.tron = {
    isTronLink: true,
    tronWeb,
    request: async ({ method }) => {
      window.weirTronRequests = [...(window.weirTronRequests || []), method];
      tronWeb.defaultAddress.base58 = ${JSON.stringify(address)};
      return [${JSON.stringify(address)}];
    },
  };
})();`;

/** Chromium with the stand-in TronLink for the devnet payer, on the session's hosted page; what it broadcast. */
async function pageWithTronLink(
  t: ExecutionContext,
  w: Awaited<ReturnType<typeof startTronWeir>>,
  sessionId: string,
  trx: TrxAmounts = 'as given',
) {
  const payer = w.payer();
  const browser = await launchChromium(t);
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const broadcast: Built[] = [];
  await context.exposeFunction('weirTronTxId', (rawHex: string) =>
    createHash('sha256').update(Buffer.from(rawHex, 'hex')).digest('hex'),
  );
  await context.exposeFunction('weirTronSign', (transaction: { txID: string; raw_data_hex: string; raw_data: Built }) =>
    payer.signer.signTransaction(transaction),
  );
  await context.exposeFunction(
    'weirTronBroadcast',
    async (signed: { txID: string; raw_data: Built & { built?: Built }; signature: string[] }) => {
      // What a node would check: the signature over the txID is the sender's.
      const signer = await recoverAddress({ hash: `0x${signed.txID}`, signature: `0x${signed.signature[0]}` as Hex });
      if (evmToTron(signer) !== signed.raw_data.from) throw new Error(`signed by ${evmToTron(signer)}, not the sender`);
      const built = signed.raw_data.built ?? signed.raw_data;
      broadcast.push({ ...built, amount: String(built.amount) });
      const { contract, to, amount } = built;
      const paid =
        contract === 'TRX'
          ? await payer.payTrx(to, BigInt(amount))
          : await payer.payTrc20(contract, to, BigInt(amount));
      // TronLink answers the bare txID, as Tron's tools show it.
      return paid.hash.replace(/^0x/, '');
    },
  );
  await context.addInitScript(injectedTronLink(payer.address, trx));
  const page = await context.newPage();
  await page.goto(`${w.weir.url}/checkout/${sessionId}`);
  return { page, broadcast, payer };
}

test('TronLink (an injected TIP-1193 provider) pays a USDT session from the hosted page: signed by the payer, seen, completed', async (t) => {
  const w = await startTronWeir(t, { finalizedDepth: DEPTH });
  const s = await w.session('usdt', '700000000'); // 7 USDT
  const deposit = w.addressOf(s, 'usdt');
  const { page, broadcast, payer } = await pageWithTronLink(t, w, s.id);
  await page.getByRole('button', { name: /USDT/ }).click();
  await page.locator('#tron-wallet-actions[data-ready="true"]').waitFor({ state: 'attached' });
  await page.locator('#address', { hasText: deposit }).waitFor();
  t.regex(
    (await page.locator('#fee-hint').textContent()) ?? '',
    /^The local Tron charges no network fee: a wallet holding only USDT can send it/,
  );
  // The Tron state of the page (the T… address, QR, the TronLink button) at both widths, checked by axe.
  await screenshotsWithAxe(t, page, 'tron');
  await page.getByRole('button', { name: 'Pay with TronLink' }).click();
  await page.locator('.tron-wallet-message', { hasText: 'sent' }).waitFor({ state: 'attached' });
  t.regex((await page.locator('.tron-wallet-message').textContent()) ?? '', /^Payment sent/);
  // By CSS, not role: once Weir sees the payment the pay controls are hidden, and a role query waits for them to show.
  t.true(await page.locator('[data-tron-action="pay"]').isDisabled(), 'not offered twice');
  t.deepEqual(await page.evaluate(() => (globalThis as unknown as { weirTronRequests: unknown }).weirTronRequests), [
    'eth_requestAccounts',
  ]);
  t.deepEqual(
    broadcast.map(({ contract, selector, to, amount, from }) => ({ contract, selector, to, amount, from })),
    [
      {
        contract: w.tokens.usdt,
        selector: 'transfer(address,uint256)',
        to: deposit,
        amount: '7000000',
        from: payer.address,
      },
    ],
    "a TRC-20 transfer of what is due, to the session's T… address, from the TronLink account",
  );
  await w.until(s.id, (x) => x.paymentIntent.transactions.length === 1, 'the payment seen');
  await w.mine(DEPTH + 1);
  const done = await w.until(s.id, (x) => x.status === 'complete', 'completion');
  t.is(done.paymentIntent.transactions[0]!.amountRaw, '7000000');

  // Once paid, the page no longer offers to pay.
  await page.reload();
  t.is(await page.locator('#tron-wallet-actions').count(), 0);
});

test('TronLink pays a TRX session: a TRX transfer of what is due, in sun', async (t) => {
  const w = await startTronWeir(t, { finalizedDepth: DEPTH });
  const s = await w.session('trx', '1250000000'); // 12.5 TRX
  const { page, broadcast, payer } = await pageWithTronLink(t, w, s.id);
  await page.getByRole('button', { name: /TRX/ }).click();
  await page.locator('#tron-wallet-actions[data-ready="true"]').waitFor({ state: 'attached' });
  await page.locator('#address', { hasText: w.addressOf(s, 'trx') }).waitFor();
  t.false(await page.locator('#fee-hint').isVisible(), 'TRX pays its own fee');
  await page.getByRole('button', { name: 'Pay with TronLink' }).click();
  await page.locator('.tron-wallet-message', { hasText: 'sent' }).waitFor({ state: 'attached' });
  t.deepEqual(
    broadcast.map(({ contract, to, amount, from }) => ({ contract, to, amount, from })),
    [{ contract: 'TRX', to: w.addressOf(s, 'trx'), amount: '12500000', from: payer.address }],
  );
  await w.mine(DEPTH + 1);
  const done = await w.until(s.id, (x) => x.status === 'complete', 'completion');
  t.is(done.paymentIntent.transactions[0]!.amountRaw, '12500000');
});

/** 2^53 + 1 sun: the first amount a JS number cannot hold (9,007,199,254.740993 TRX). */
const PAST_SAFE_SUN = 2n ** 53n + 1n;

test('TronLink pays a TRX session past 2^53 sun: the transfer carries the exact sun, as a decimal string', async (t) => {
  const w = await startTronWeir(t, { finalizedDepth: DEPTH });
  // 10^8 scale: the sun times 100.
  const s = await w.session('trx', (PAST_SAFE_SUN * 100n).toString());
  const { page, broadcast } = await pageWithTronLink(t, w, s.id);
  await page.getByRole('button', { name: /TRX/ }).click();
  await page.locator('#tron-wallet-actions[data-ready="true"]').waitFor({ state: 'attached' });
  await page.locator('#address', { hasText: w.addressOf(s, 'trx') }).waitFor();
  await page.getByRole('button', { name: 'Pay with TronLink' }).click();
  await page.locator('.tron-wallet-message', { hasText: 'sent' }).waitFor({ state: 'attached' });
  t.deepEqual(
    broadcast.map(({ contract, amount }) => ({ contract, amount })),
    [{ contract: 'TRX', amount: PAST_SAFE_SUN.toString() }],
  );
  await w.mine(DEPTH + 1);
  const done = await w.until(s.id, (x) => x.status === 'complete', 'completion');
  t.is(done.paymentIntent.transactions[0]!.amountRaw, PAST_SAFE_SUN.toString());
});

test('a tronWeb that builds the TRX transfer past 2^53 sun as a JS number (tronweb 6 parseInt) is not signed: the payer is told to scan the code, nothing is sent', async (t) => {
  const w = await startTronWeir(t, { finalizedDepth: DEPTH });
  const s = await w.session('trx', (PAST_SAFE_SUN * 100n).toString());
  const { page, broadcast } = await pageWithTronLink(t, w, s.id, 'parseInt');
  await page.getByRole('button', { name: /TRX/ }).click();
  await page.locator('#tron-wallet-actions[data-ready="true"]').waitFor({ state: 'attached' });
  await page.locator('#address', { hasText: w.addressOf(s, 'trx') }).waitFor();
  await page.getByRole('button', { name: 'Pay with TronLink' }).click();
  await page.locator('.tron-wallet-message', { hasText: 'Nothing was sent' }).waitFor({ state: 'attached' });
  t.is(
    await page.locator('.tron-wallet-message').textContent(),
    'TronLink cannot send exactly 9007199254.740993 TRX. Nothing was sent: scan the code with a Tron wallet app instead.',
  );
  t.deepEqual(broadcast, []);
  t.false(await page.locator('[data-tron-action="pay"]').isDisabled(), 'the payer may try again');
});
