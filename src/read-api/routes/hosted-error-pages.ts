import type Koa from 'koa';
import { renderErrorPage } from '../../hosted/error-page.ts';
import type { Branding } from '../../hosted/html.ts';
import {
  type PageNotice,
  type RefusalNotices,
  NO_SUCH_PAGE,
  NOT_THIS_WAY,
  SOMETHING_WENT_WRONG,
  tryAgainIn,
} from '../../hosted/page-notices.ts';
import { ConflictError, ContentTooLargeError, RateLimitedError, WeirError } from '../../shared/errors.ts';
import { organizationRecordId } from '../../actors/organization.ts';
import { COLLECTIONS, type OrganizationDoc } from '../../projections/collections.ts';
import type { ReadStore } from '../../read-store/read-store.ts';
import type { ApiState } from '../api-context.ts';
import { clientHttpStatus, type UnexpectedErrorLog, unexpectedErrorBody } from '../middleware.ts';
import { isUnreadableBody } from '../request-body.ts';

/** What a hosted page's notice shows of the record its path names: its business, its mode, the way back to it. */
export type NoticeFrame = { org: Branding | null; testMode: boolean; back: { href: string; words: string } };

/**
 * Whether `error` is a refusal that passes, after which the payer may try again: a rate limit, a form
 * too large to read, a passing conflict (a busy record: `ConflictError.passing`), a service Weir relies
 * on that did not answer. Every hosted page answers these with its 503 (429, 413) page to try again
 * from, never with the words of a lasting refusal.
 */
export const isPassingRefusal = (error: unknown): error is WeirError =>
  error instanceof WeirError &&
  (error instanceof RateLimitedError ||
    error instanceof ContentTooLargeError ||
    (error instanceof ConflictError && error.passing) ||
    error.statusCode >= 500 ||
    'Retry-After' in error.headers);

/** A rate limit's notice, of the limit that was spent, then when to try again. */
const rateLimitedNotice = (error: RateLimitedError, notices: RefusalNotices): PageNotice => {
  const notice = (error.limit === 'hosted_creates' ? notices.startsLimited : undefined) ?? notices.rateLimited;
  return { ...notice, message: `${notice.message} ${tryAgainIn(error.retryAfterSeconds)}` };
};

const passingNotice = (error: WeirError, notices: RefusalNotices): PageNotice =>
  error instanceof RateLimitedError
    ? rateLimitedNotice(error, notices)
    : error instanceof ContentTooLargeError
      ? notices.tooLarge
      : notices.unavailable;

/** The id a hosted path names: `/checkout/{id}`, `/invoices/{id}/pay`, `/pay/{id}`. */
export const pathId = (ctx: Koa.Context): string => ctx.path.split('/')[2] ?? '';

/** A notice in the hosted frame of `frame` (unbranded when none), with its way back when trying again helps. */
export const renderNotice = (frame: NoticeFrame | null, notice: PageNotice): string =>
  renderErrorPage({
    org: frame?.org ?? null,
    heading: notice.heading,
    message: notice.message,
    testMode: frame?.testMode ?? false,
    back: notice.retry ? (frame?.back ?? null) : null,
  });

/**
 * What the router answered without a body, which the error middleware would write as JSON, as a page
 * says it: a method the page does not take (405, its Allow header kept), a path no route has (404).
 * Around the page scripts' JSON routes (`scriptRoutes`) only the 404: a browser lands on a mistyped path,
 * while a script asking a route the wrong way keeps its JSON.
 */
const routerNotice = (ctx: Koa.Context, scriptRoutes: boolean): PageNotice | null => {
  if (ctx.body !== undefined && ctx.body !== null) return null;
  if (ctx.status === 404) return NO_SUCH_PAGE;
  return ctx.status === 405 && !scriptRoutes ? NOT_THIS_WAY : null;
};

/** A lasting refusal (a 4xx) of what a page's script sent, in the words its page shows the payer. */
export type PayerWords = (error: WeirError) => string;

/**
 * Around a browser's hosted pages, the rate limits and body limit included: a passing refusal (429
 * with its Retry-After, 413 keeping Connection: close, 503) is a page in plain words in the frame of
 * the record the path names, and an unexpected error a 500 page saying it was ours, logged as the
 * error middleware logs it, its message and stack never shown; a body it cannot read (compressed: 415; of
 * another type, malformed: 400) a page saying so with that status; a method the page does not take (405)
 * and a path no route has (404) a page saying so (`routerNotice`). Other refusals (the API's 4xx) go
 * on to the error middleware. Mounted on page routes; around the page scripts' JSON routes with
 * `scriptRoutes`, where only a path no route has is a page and every refusal keeps its JSON shape,
 * status, code and headers, its message the payer's words the script shows as they are: a lasting
 * one's from `scriptRoutes` (the page's own words for it, so the two cannot drift), a passing one's
 * its notice's, an unexpected error's (a 500, logged) the page's own too.
 * Finding the frame costs a refused request a read or two, less than a page served; when that fails
 * too, the notice is drawn unbranded.
 */
export function hostedErrorPages<F>(page: {
  frameOf: (ctx: Koa.Context) => Promise<F | null>;
  render: (frame: F | null, notice: PageNotice) => string;
  notices: RefusalNotices;
  logUnexpected: UnexpectedErrorLog;
  scriptRoutes?: PayerWords;
}): Koa.Middleware<ApiState> {
  const answer = async (ctx: Koa.Context, notice: PageNotice) => {
    const frame = await page.frameOf(ctx).catch(() => null);
    ctx.status = notice.status;
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Cache-Control', 'no-store');
    // A file's answer (the invoice PDF) may have named its download before it failed.
    ctx.remove('Content-Disposition');
    ctx.body = page.render(frame, notice);
  };
  /** The JSON a script is answered with: the refusal's, in `message` the words its page shows the payer. */
  const answerScript = (ctx: Koa.Context, error: WeirError, message: string) => {
    ctx.set(error.headers);
    ctx.status = error.statusCode;
    ctx.body = { ...error.toBody(), message };
  };
  const payerWords = page.scriptRoutes;
  const scriptRoutes = payerWords !== undefined;
  return async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      if (payerWords) {
        if (isPassingRefusal(error)) return answerScript(ctx, error, passingNotice(error, page.notices).message);
        if (error instanceof WeirError) return answerScript(ctx, error, payerWords(error));
        if (clientHttpStatus(error) !== null) throw error;
        // Ours: logged as the error middleware logs it, said as the page says it (the script shows the message).
        page.logUnexpected(ctx, error);
        ctx.status = 500;
        ctx.body = unexpectedErrorBody(SOMETHING_WENT_WRONG.message);
        return;
      }
      let notice: PageNotice;
      if (isPassingRefusal(error)) {
        ctx.set(error.headers);
        notice = passingNotice(error, page.notices);
      } else if (isUnreadableBody(error)) notice = { ...page.notices.unreadable, status: error.statusCode };
      else if (error instanceof WeirError || clientHttpStatus(error) !== null) throw error;
      else {
        page.logUnexpected(ctx, error);
        notice = SOMETHING_WENT_WRONG;
      }
      return answer(ctx, notice);
    }
    const notice = routerNotice(ctx, scriptRoutes);
    if (notice) await answer(ctx, notice);
  };
}

/** A record a hosted page shows (a checkout session, an invoice): whose it is, and in which environment. */
type HostedRecord = Pick<OrganizationDoc, 'organizationId' | 'environment'> & { id: string };

/**
 * `hostedErrorPages` for the pages of one kind of record: the record the path names, when `find`
 * gives it, lends its organization's branding, its Test mode badge and the way back to its page.
 */
export function recordErrorPages(
  readStore: ReadStore,
  logUnexpected: UnexpectedErrorLog,
  pages: {
    find: (id: string) => Promise<HostedRecord | null>;
    back: (id: string) => NoticeFrame['back'];
    notices: RefusalNotices;
    /** Around the page scripts' JSON routes: see `hostedErrorPages`. */
    scriptRoutes?: PayerWords;
  },
): Koa.Middleware<ApiState> {
  const orgs = readStore.collection<OrganizationDoc>(COLLECTIONS.organizations);
  return hostedErrorPages({
    frameOf: async (ctx): Promise<NoticeFrame | null> => {
      const record = await pages.find(pathId(ctx));
      if (!record) return null;
      return {
        org: await orgs.get(organizationRecordId(record.organizationId, record.environment)),
        testMode: record.environment === 'test',
        back: pages.back(record.id),
      };
    },
    render: renderNotice,
    notices: pages.notices,
    logUnexpected,
    scriptRoutes: pages.scriptRoutes,
  });
}
