/**
 * A button that copies the value of the input `target` (dashboard.js's copy block). It is hidden
 * until that script shows it: without JavaScript the input stays there to select by hand.
 */
export const CopyButton = ({ target, label = 'Copy' }: { target: string; label?: string }): JSX.Element => (
  <button type="button" class="button-secondary copy-button" data-copy={target} hidden>
    <span class="copy-label" safe>
      {label}
    </span>
    <span class="copy-done" role="status" aria-live="polite"></span>
  </button>
);
