// The hosted checkout page's wallet actions: "Connect wallet" pays through an injected EIP-1193
// wallet (found by EIP-6963 discovery, window.ethereum otherwise), and "Pay with test wallet" asks
// Weir to pay a test session from the local devnet's funded account. Served by Weir from /assets.
// What is left to pay is read fresh from the status JSON before each payment, never only from the HTML.
(() => {
  const root = document.getElementById('wallet-actions');
  if (!root || !root.dataset.session) return;
  const base = `/checkout/${root.dataset.session}`;
  const message = root.querySelector('.wallet-message');
  const buttons = root.querySelector('.wallet-buttons');
  const connectButton = root.querySelector('[data-wallet-action="connect"]');
  const testButton = root.querySelector('[data-wallet-action="test"]');
  const chooser = root.querySelector('.wallet-providers');
  /** Per deposit address (by id): chain, token, deposit address and names, from the page's data attributes. */
  const targets = new Map(
    [...root.querySelectorAll('.wallet-targets [data-address]')].map((el) => [el.dataset.address, el.dataset]),
  );
  const FINAL = ['complete', 'expired', 'canceled'];

  /** A route's JSON answer or null, and the words when none came: hosted-fetch.js (loaded before this script). */
  const { answer, UNREACHABLE } = window.weirHosted;

  /** The chosen payment method and what is left to pay, as the server sees it now. */
  let due = null;
  let busy = false;

  function say(text, kind = 'info') {
    message.textContent = text;
    message.dataset.kind = kind;
  }

  /** A sent transaction: its hash, linked to the network's explorer when it has one. */
  function showTransaction(lead, hash, target) {
    message.textContent = `${lead} `;
    message.dataset.kind = 'sent';
    const template = target.explorerTxUrl;
    const link = document.createElement(template ? 'a' : 'code');
    link.textContent = hash;
    link.className = 'wallet-tx';
    if (template) {
      link.href = template.replace('{hash}', hash);
      link.target = '_blank';
      link.rel = 'noopener noreferrer';
    }
    message.append(link, '. Waiting for the network to confirm it…');
  }

  function setBusy(value) {
    busy = value;
    for (const b of root.querySelectorAll('button')) b.disabled = value;
  }

  /** Reads the session's status: the chosen method, what is left, and whether the page is still payable. */
  async function refresh() {
    const res = await answer(`${base}/status`, { cache: 'no-store' });
    if (!res?.ok) throw { weirMessage: res?.body?.message || UNREACHABLE };
    return apply(res.body);
  }

  /** Shows the buttons that fit the session as the status says it is. */
  function apply(status) {
    due = status.wallet ?? null;
    const target = due ? targets.get(due.addressId) : undefined;
    if (testButton) testButton.hidden = !(target && target.testWallet === 'true');
    // Nothing to pay once the session is over, or while what was sent covers the rest (shown again if it is withdrawn).
    const over = FINAL.includes(status.status) || due?.amountRemainingRaw === '0';
    buttons.hidden = over;
    if (over) chooser.hidden = true;
    return { status, target };
  }

  /** The chosen target with what is left to pay, or null after saying why there is nothing to pay. */
  async function payable() {
    const { status, target } = await refresh();
    if (FINAL.includes(status.status)) return null;
    if (!due || !target) {
      say('Choose how to pay first.', 'error');
      return null;
    }
    const amount = BigInt(due.amountRemainingRaw);
    if (amount === 0n) {
      say('Nothing is left to pay: the payment sent is waiting for confirmation.');
      return null;
    }
    return { target, amount };
  }

  const codeOf = (error) => error?.code ?? error?.data?.originalError?.code;

  /** What a payer reads when the wallet refused or failed. */
  function describe(error) {
    const code = codeOf(error);
    if (code === 4001) return 'You declined the request in your wallet. Nothing was sent; you can try again.';
    if (code === -32002) return 'Your wallet already has a request waiting: open it to continue.';
    if (code === 4100) return 'Your wallet did not allow this page to use the account. Nothing was sent.';
    if (error?.weirMessage) return error.weirMessage;
    return `Your wallet could not send the payment: ${error?.message ?? String(error)}. Nothing was sent.`;
  }

  const pad32 = (hex) => hex.padStart(64, '0');
  /** ERC-20 transfer(address,uint256) calldata, encoded by hand (selector 0xa9059cbb). */
  const transferData = (to, amount) => `0xa9059cbb${pad32(to.slice(2).toLowerCase())}${pad32(amount.toString(16))}`;

  /** Puts the wallet on the target's chain: switches, or adds the chain first when the wallet does not know it (4902). */
  async function ensureChain(provider, target) {
    const onChain = async () => Number(await provider.request({ method: 'eth_chainId' })) === Number(target.chainId);
    if (await onChain()) return;
    say(`Switch your wallet to ${target.chainName}…`);
    try {
      await provider.request({ method: 'wallet_switchEthereumChain', params: [{ chainId: target.chainId }] });
    } catch (error) {
      if (codeOf(error) !== 4902) throw error;
      if (!target.rpcUrl)
        throw { weirMessage: `Your wallet does not know ${target.chainName}: add it to your wallet, then try again.` };
      say(`Add ${target.chainName} to your wallet…`);
      await provider.request({
        method: 'wallet_addEthereumChain',
        params: [
          {
            chainId: target.chainId,
            chainName: target.chainName,
            nativeCurrency: {
              name: target.nativeName,
              symbol: target.nativeSymbol,
              decimals: Number(target.nativeDecimals),
            },
            rpcUrls: [target.rpcUrl],
            ...(target.explorerUrl ? { blockExplorerUrls: [target.explorerUrl] } : {}),
          },
        ],
      });
      // Most wallets switch to a chain they just added; switch if this one did not.
      if (!(await onChain()))
        await provider.request({ method: 'wallet_switchEthereumChain', params: [{ chainId: target.chainId }] });
    }
    if (!(await onChain())) throw { weirMessage: `Your wallet is not on ${target.chainName}. Nothing was sent.` };
  }

  async function payWith(provider) {
    if (busy) return;
    setBusy(true);
    chooser.hidden = true;
    try {
      if (!(await payable())) return;
      say('Confirm in your wallet…');
      const accounts = await provider.request({ method: 'eth_requestAccounts' });
      const from = Array.isArray(accounts) ? accounts[0] : undefined;
      if (!from) throw { weirMessage: 'Your wallet shared no account. Nothing was sent.' };
      const first = await payable();
      if (!first) return;
      await ensureChain(provider, first.target);
      // Read again: a payment may have arrived while the wallet was asking.
      const chosen = await payable();
      if (!chosen) return;
      const { target, amount } = chosen;
      say(`Confirm the payment of ${target.symbol} in your wallet…`);
      const transaction = target.token
        ? { from, to: target.token, data: transferData(target.to, amount), value: '0x0' }
        : { from, to: target.to, value: `0x${amount.toString(16)}` };
      const hash = await provider.request({ method: 'eth_sendTransaction', params: [transaction] });
      showTransaction('Payment sent:', hash, target);
    } catch (error) {
      say(describe(error), 'error');
    } finally {
      setBusy(false);
    }
  }

  // EIP-6963: wallets announce themselves; several may be installed.
  const announced = [];
  window.addEventListener('eip6963:announceProvider', (event) => {
    const detail = event.detail;
    if (!detail?.provider || typeof detail.provider.request !== 'function') return;
    if (
      announced.some((a) => a.provider === detail.provider || (detail.info?.uuid && a.info?.uuid === detail.info.uuid))
    )
      return;
    announced.push(detail);
  });
  window.dispatchEvent(new Event('eip6963:requestProvider'));

  connectButton?.addEventListener('click', () => {
    if (announced.length > 1) {
      // Let the payer pick which wallet pays.
      chooser.replaceChildren(
        ...announced.map((a) => {
          const b = document.createElement('button');
          b.type = 'button';
          b.className = 'wallet-button';
          b.textContent = `Pay with ${a.info?.name || 'this wallet'}`;
          b.addEventListener('click', () => payWith(a.provider));
          return b;
        }),
      );
      chooser.hidden = false;
      chooser.querySelector('button').focus();
      return;
    }
    const provider = announced[0]?.provider ?? window.ethereum;
    if (!provider || typeof provider.request !== 'function') {
      say('No browser wallet found. Install one, or send the amount to the address above from any wallet.', 'error');
      return;
    }
    void payWith(provider);
  });

  testButton?.addEventListener('click', async () => {
    if (busy) return;
    setBusy(true);
    try {
      const chosen = await payable();
      if (!chosen) return;
      say('Sending the test payment…');
      const res = await answer(`${base}/test-payment`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ assetId: chosen.target.address }),
      });
      if (!res) say(UNREACHABLE, 'error');
      else if (!res.ok) say(res.body?.message ?? 'The test payment could not be sent.', 'error');
      else showTransaction('Test payment sent:', res.body.transactionHash, chosen.target);
    } catch (error) {
      say(error?.weirMessage ?? `The test payment could not be sent: ${error?.message ?? String(error)}`, 'error');
    } finally {
      setBusy(false);
    }
  });

  // Follow the chosen asset (the test button applies to the devnet only) through checkout.js's status poll.
  document.addEventListener('weir:status', (event) => apply(event.detail));
})();
