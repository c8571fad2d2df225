import type { Children } from '@kitajs/html';
import { Alert } from './components.tsx';

/**
 * A value to copy (a secret shown once, a link): read-only text the user can select, and a Copy
 * button that dashboard.js wires up (`data-copy` names the input). Without JavaScript the button
 * stays hidden and the text can still be selected and copied by hand.
 */
export function CopyField(props: { id: string; label: string; value: string; hint?: string }): JSX.Element {
  return (
    <div class="field copy-field">
      <label for={props.id} safe>
        {props.label}
      </label>
      <div class="copy-row">
        <input
          id={props.id}
          type="text"
          value={props.value}
          readonly
          spellcheck="false"
          autocomplete="off"
          aria-describedby={props.hint ? `${props.id}-hint` : undefined}
        />
        <button type="button" class="button-secondary copy-button" data-copy={props.id} hidden>
          Copy
        </button>
      </div>
      {props.hint ? (
        <p class="hint" id={`${props.id}-hint`} safe>
          {props.hint}
        </p>
      ) : (
        ''
      )}
      <p class="copy-status visually-hidden" role="status" data-copy-status={props.id}></p>
    </div>
  );
}

/**
 * A secret just made, in the one answer that shows it: what happened and that it is shown this
 * once (`children`), then the value to copy.
 */
export function SecretShownOnce(props: {
  id: string;
  label: string;
  value: string;
  hint?: string;
  children: Children;
}): JSX.Element {
  return (
    <div class="issued-secret" id="issued-secret">
      <Alert tone="success">{props.children}</Alert>
      <CopyField id={props.id} label={props.label} value={props.value} hint={props.hint} />
    </div>
  );
}
