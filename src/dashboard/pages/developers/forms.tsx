import type { Children } from '@kitajs/html';
import type { ApiAnswer } from '../../../read-api/api-bridge.ts';
import type { DashboardContext } from '../../context.ts';
import { Alert, CsrfField } from '../../ui/components.tsx';
import type { ScreenId } from '../../screens.ts';
import { AppLayout } from '../../ui/layout.tsx';

/** An API error's message for the form: its text without the leading `field: ` the API puts first. */
export function apiMessage(answer: ApiAnswer): string {
  const body = answer.body as { message?: unknown } | null;
  const message = typeof body?.message === 'string' ? body.message : `the request failed (${answer.status})`;
  return answer.field && message.startsWith(`${answer.field}: `) ? message.slice(answer.field.length + 2) : message;
}

/** The form input an API field path belongs to, by the first matching prefix of `inputs` (else the form). */
export function inputOf(field: string | undefined, inputs: Record<string, string>): string {
  if (!field) return 'form';
  for (const [prefix, input] of Object.entries(inputs))
    if (field === prefix || field.startsWith(`${prefix}.`) || field.startsWith(`${prefix}[`)) return input;
  return 'form';
}

/** Errors of a form by input name; `form` is one not tied to an input (shown above the form). */
export type FormErrors = Record<string, string | undefined>;

/** An API refusal as form errors: its message at the input its field names. */
export const errorsOf = (answer: ApiAnswer, inputs: Record<string, string>): FormErrors => ({
  [inputOf(answer.field, inputs)]: apiMessage(answer),
});

/** A one-line message after a post/redirect/get, from `?done=` (only the known ones are shown). */
export function DoneAlert({ ctx, messages }: { ctx: DashboardContext; messages: Record<string, string> }) {
  const done = ctx.query.done;
  const text = typeof done === 'string' && Object.hasOwn(messages, done) ? messages[done] : undefined;
  return text ? (
    <Alert tone="success">
      <span safe>{text}</span>
    </Alert>
  ) : (
    ''
  );
}

/**
 * A page that asks before an action that cannot be undone (works without JavaScript); `children`
 * are more fields of its form (a re-authentication).
 */
export function ConfirmPage(props: {
  ctx: DashboardContext;
  title: string;
  message: string;
  action: string;
  button: string;
  back: string;
  /** The way back's label, where "Cancel" would read as the action itself (a subscription's). */
  backLabel?: string;
  screen?: ScreenId;
  children?: Children;
}): JSX.Element {
  const { ctx } = props;
  return (
    <AppLayout ctx={ctx} title={props.title} screen={props.screen ?? 'developers'}>
      <section class="card narrow-card" aria-label={props.title}>
        <p safe>{props.message}</p>
        <form method="post" action={props.action}>
          <CsrfField token={ctx.state.csrfToken} />
          {props.children ?? ''}
          <div class="form-actions">
            <button type="submit" class="button-danger" safe>
              {props.button}
            </button>
            <a class="button-secondary" href={props.back} safe>
              {props.backLabel ?? 'Cancel'}
            </a>
          </div>
        </form>
      </section>
    </AppLayout>
  );
}
