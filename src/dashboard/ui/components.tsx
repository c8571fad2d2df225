import type { Children, PropsWithChildren } from '@kitajs/html';
import { documentAmount } from '../../shared/money.ts';
import { formatPerZone, UTC } from '../../shared/time-zone.ts';

/** The hidden CSRF field every state-changing form carries (the area refuses a POST without it). */
export const CsrfField = ({ token }: { token: string }): JSX.Element => (
  <input type="hidden" name="_csrf" value={token} />
);

/** A card with an optional heading (an h2, labelling the section) and actions beside it. */
export function Card(
  props: PropsWithChildren<
    { title?: string; id?: string; actions?: Children; class?: string } & Partial<
      Record<`hx-${string}` | `aria-${string}`, string>
    >
  >,
): JSX.Element {
  const { title, actions, children, class: extra, id, ...attributes } = props;
  const headingId = id && title ? `${id}-title` : undefined;
  return (
    <section class={['card', extra]} id={id} aria-labelledby={headingId} {...attributes}>
      {title || actions !== undefined ? (
        <header class="card-header">
          {title ? (
            <h2 id={headingId} safe>
              {title}
            </h2>
          ) : (
            ''
          )}
          {actions}
        </header>
      ) : (
        ''
      )}
      {children}
    </section>
  );
}

/**
 * A part of a page that follows the server's changes: whenever one of `topics` is announced (see
 * events.ts) its content is reloaded from `url`, a route that answers the content alone. Changes
 * in a burst are taken together, and one announced while a reload runs is reloaded after it.
 */
/** Attributes that redraw this element whole (`outerHTML`) from `url` when the server announces one of `topics`. */
export const liveRefresh = (url: string, topics: string[]) => ({
  'hx-get': url,
  'hx-trigger': topics.map((topic) => `weir:${topic} from:body delay:150ms`).join(', '),
  'hx-swap': 'outerHTML',
  'hx-sync': 'this:queue last',
});

export const Live = ({
  url,
  topics,
  class: extra,
  children,
}: PropsWithChildren<{ url: string; topics: string[]; class?: string }>): JSX.Element => (
  <div
    class={['live', extra]}
    hx-get={url}
    hx-trigger={topics.map((topic) => `weir:${topic} from:body delay:150ms`).join(', ')}
    hx-swap="innerHTML"
    hx-sync="this:queue last"
  >
    {children}
  </div>
);

/**
 * A table that scrolls sideways when the card is narrower than it (a phone): focusable and named,
 * so a keyboard user can scroll it too.
 */
export const TableScroll = ({ label, children }: PropsWithChildren<{ label: string }>): JSX.Element => (
  <div class="table-wrap" role="region" aria-label={label} tabindex="0">
    {children}
  </div>
);

/** What a list shows when it has nothing, in a sentence, with an optional hint. */
export const EmptyState = ({ message, hint }: { message: string; hint?: string }): JSX.Element => (
  <div class="empty">
    <p safe>{message}</p>
    {hint ? (
      <p class="muted" safe>
        {hint}
      </p>
    ) : (
      ''
    )}
  </div>
);

export type Tone = 'neutral' | 'success' | 'warning' | 'danger' | 'info';

/** A short status word in a coloured pill. */
export const Badge = ({ tone = 'neutral', label }: { tone?: Tone; label: string }): JSX.Element => (
  <span class={`badge badge-${tone}`} safe>
    {label}
  </span>
);

/** An API amount (10^8-scaled integer string or bigint) with its currency, in figures with grouping. */
export const money = (amount: string | bigint, currency: string): string =>
  `${documentAmount(BigInt(amount), '−')} ${currency.toUpperCase()}`;

/** An amount in a token's own units (`decimals`) with its symbol, written as `money` writes API amounts. */
export const assetMoney = (amount: bigint, decimals: number, symbol: string): string =>
  `${documentAmount(amount, '−', decimals)} ${symbol}`;

/**
 * A payment's amount as its row shows it: `money` of its 10^8 amount, or, for dust that scale reads
 * as 0 (an 18-decimal transfer under 10^-8), its exact amount in the asset's decimals, never "0.00".
 */
export const paymentAmountOf = (
  payment: { amount: string; amountRaw: string | null; asset: { decimals: number } | null },
  currency: string,
): string =>
  BigInt(payment.amount) === 0n && payment.asset && BigInt(payment.amountRaw ?? '0') > 0n
    ? assetMoney(BigInt(payment.amountRaw ?? '0'), payment.asset.decimals, currency.toUpperCase())
    : money(payment.amount, currency);

const dateTimes = formatPerZone(
  (timeZone) =>
    new Intl.DateTimeFormat('en-GB', {
      day: 'numeric',
      month: 'short',
      hour: '2-digit',
      minute: '2-digit',
      timeZone,
      timeZoneName: 'short',
    }),
);

/**
 * A moment in `timeZone` (an IANA zone, checked by the caller) as its day and time ("30 Nov, 22:30") and
 * the zone's short name at that moment ("UTC", "GMT-5", "CET").
 */
export function dateTimeIn(iso: string, timeZone: string = UTC): { when: string; zone: string } {
  const format = dateTimes(timeZone);
  const parts = format.formatToParts(new Date(iso));
  return {
    when: parts
      .filter((p) => p.type !== 'timeZoneName')
      .map((p) => p.value)
      .join('')
      .trim(),
    zone: parts.find((p) => p.type === 'timeZoneName')?.value ?? timeZone,
  };
}

/**
 * A moment in the dashboard's zone (`ctx.state.timeZone`: required, so no page shows UTC by forgetting
 * it) as "25 Nov, 14:03 UTC" or "25 Nov, 15:03 CET", in a <time> with its ISO value (the zone is left out on a phone).
 */
export const DateTime = ({ iso, timeZone }: { iso: string; timeZone: string }): JSX.Element => {
  const { when, zone } = dateTimeIn(iso, timeZone);
  return (
    <time datetime={iso}>
      <span safe>{when}</span>
      <span class="tz" safe>{` ${zone}`}</span>
    </time>
  );
};

/** An id or address cut to its ends (the whole in its title), in monospace. */
export const ShortId = ({ value, keep = 6 }: { value: string; keep?: number }): JSX.Element => (
  <code class="short-id" title={value} safe>
    {value.length > keep * 2 + 1 ? `${value.slice(0, keep)}…${value.slice(-4)}` : value}
  </code>
);

/** A message above a form or in a page: what went wrong (danger), or what happened (success). */
export const Alert = ({ tone, children }: PropsWithChildren<{ tone: 'danger' | 'success' | 'info' }>): JSX.Element => (
  <div class={`alert alert-${tone}`} role={tone === 'danger' ? 'alert' : 'status'}>
    {children}
  </div>
);

/** A control's aria-describedby: its hint and its error, when it has them. */
export const describedBy = (id: string, hint?: string, error?: string | null): string | undefined =>
  [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;

/** A control's hint and error, under it (ids as `describedBy` names them). */
export const FieldNotes = ({ id, hint, error }: { id: string; hint?: string; error?: string | null }): JSX.Element => (
  <>
    {hint ? (
      <p class="hint" id={`${id}-hint`} safe>
        {hint}
      </p>
    ) : (
      ''
    )}
    {error ? (
      <p class="error" id={`${id}-error`} safe>
        {error}
      </p>
    ) : (
      ''
    )}
  </>
);

/**
 * One labelled control with its hint and error under it: the frame of `Field` and of the controls
 * of form-parts.tsx. `hiddenLabel`: read by screen readers only (a control inside a table row).
 * `required`: marked so beside the label for the eye, by the stylesheet (the control's own
 * `required` says it to a screen reader; the label's text, and so its name, stays the label).
 */
export const FieldFrame = (
  props: PropsWithChildren<{
    id: string;
    label: string;
    hint?: string;
    error?: string | null;
    hiddenLabel?: boolean;
    required?: boolean;
  }>,
): JSX.Element => (
  <div class={['field', props.error ? 'has-error' : '', props.hiddenLabel ? 'field-inline' : '']}>
    <label
      for={props.id}
      class={
        [props.hiddenLabel ? 'visually-hidden' : '', props.required ? 'required' : ''].filter(Boolean).join(' ') ||
        undefined
      }
      safe
    >
      {props.label}
    </label>
    {props.children}
    <FieldNotes id={props.id} hint={props.hint} error={props.error} />
  </div>
);

/**
 * A labelled input with its error under it (named by aria-describedby), kept as typed: the
 * pattern of every dashboard form, so bad input names its field and loses nothing.
 */
export function Field(props: {
  name: string;
  label: string;
  type?: string;
  value?: string | null;
  error?: string | null;
  hint?: string;
  required?: boolean;
  autocomplete?: string;
  autofocus?: boolean;
  /** The file types a file input offers to pick. */
  accept?: string;
  maxlength?: number;
  /** The keyboard a touch screen shows (`decimal` for amounts). */
  inputmode?: 'decimal' | 'numeric';
}): JSX.Element {
  const id = `field-${props.name}`;
  return (
    <FieldFrame id={id} label={props.label} hint={props.hint} error={props.error} required={props.required}>
      <input
        id={id}
        name={props.name}
        type={props.type ?? 'text'}
        value={props.type === 'password' ? undefined : (props.value ?? undefined)}
        required={props.required}
        autocomplete={props.autocomplete}
        autofocus={props.autofocus}
        accept={props.accept}
        maxlength={props.maxlength}
        inputmode={props.inputmode}
        aria-invalid={props.error ? 'true' : undefined}
        aria-describedby={describedBy(id, props.hint, props.error)}
      />
    </FieldFrame>
  );
}

/** A fact's value: text (escaped), or markup built by the caller (a badge, a date, a link). */
export type FactValue = string | (() => JSX.Element);

/** Label and value pairs; false and null stand for facts that do not apply. */
export type FactList = readonly (readonly [term: string, value: FactValue] | false | null)[];

/**
 * Label and value pairs, in a definition list (two columns; one on a phone). Entries that are
 * false or null are left out, so a fact can be there only when it applies.
 */
export const Facts = ({ items }: { items: FactList }): JSX.Element => (
  <dl class="facts">
    {items.map((item) =>
      item ? (
        <>
          <dt safe>{item[0]}</dt>
          <dd>{typeof item[1] === 'string' ? <span safe>{item[1]}</span> : item[1]()}</dd>
        </>
      ) : (
        ''
      ),
    )}
  </dl>
);
