import { ValidationError } from '../shared/errors.ts';
import type { ApiContext } from './api-context.ts';
import { MAX_PUBLIC_BODY_BYTES, readRequestBody } from './request-body.ts';

/**
 * A hosted page's posted form (`application/x-www-form-urlencoded`, the only type read), as
 * name to value; a repeated name keeps its last value.
 */
export async function readUrlEncodedForm(ctx: ApiContext): Promise<Record<string, string>> {
  return Object.fromEntries(await readUrlEncodedFields(ctx));
}

/** A hosted page's posted form as its fields in order, a repeated name as often as it was sent. */
export async function readUrlEncodedFields(ctx: ApiContext): Promise<URLSearchParams> {
  if (!ctx.is('application/x-www-form-urlencoded'))
    throw new ValidationError(
      null,
      'the form must be posted as application/x-www-form-urlencoded',
      'invalid_content_type',
    );
  const body = await readRequestBody(ctx, MAX_PUBLIC_BODY_BYTES, 'the form');
  return new URLSearchParams(body.toString('utf8'));
}
