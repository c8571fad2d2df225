import type { ExecutionContext } from 'ava';

/** A hosted page's answer as the notice tests read it. */
export type PageAnswer = { status: number; headers: Headers; html: string };

export const pageAnswer = async (response: Response): Promise<PageAnswer> => ({
  status: response.status,
  headers: response.headers,
  html: await response.text(),
});

/** What a refusal or an error page must never show: the API's error, a stack, the error's own words. */
const INTERNALS =
  /statusCode|&quot;code|processing_error|rate_limited|rate limit|request_too_large|read_models_behind|Error:|\.ts:\d+|at async/i;

/**
 * A hosted notice page (hosted-error-pages.ts): its status, HTML, heading and words, the Test mode
 * badge or none, its way back (`back`: the link's HTML, or null for none), no internals.
 */
export function assertNoticePage(
  t: ExecutionContext,
  answer: PageAnswer,
  expected: { status: number; heading: string; says: RegExp; testMode: boolean; back: string | null },
): void {
  const why = `${answer.status}: ${answer.html.slice(0, 1500)}`;
  t.is(answer.status, expected.status, why);
  t.regex(answer.headers.get('content-type') ?? '', /^text\/html/, why);
  t.is(answer.headers.get('cache-control'), 'no-store');
  t.regex(answer.headers.get('content-security-policy') ?? '', /default-src/, 'the hosted pages’ headers stay');
  t.true(answer.html.includes(`<h1>${expected.heading}</h1>`), why);
  t.regex(answer.html, expected.says, why);
  t.is(answer.html.includes('<span class="badge">Test mode</span>'), expected.testMode, 'the Test mode badge');
  if (expected.back) t.true(answer.html.includes(expected.back), why);
  else t.notRegex(answer.html, /id="back"/, why);
  t.notRegex(answer.html, INTERNALS, why);
}
