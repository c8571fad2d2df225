import { maskUserinfo } from '../shared/mask-userinfo.ts';

/**
 * Why `weir health` cannot ask `url`, or null. Weir's /health answers anyone, so a user and
 * password in the URL are a mistake (and fetch refuses such a URL, which read as no answer).
 */
export function healthUrlProblem(url: string): string | null {
  const parsed = URL.parse(url);
  if (!parsed || !/^https?:$/.test(parsed.protocol))
    return `--url must be an http:// or https:// URL (http://127.0.0.1:8080), got ${maskUserinfo(url)}`;
  if (parsed.username !== '' || parsed.password !== '')
    return `--url must not hold a user or password (/health asks for none), got ${maskUserinfo(url)}`;
  return null;
}

/** What `weir health` found: the report when one came, what is wrong when anything is, and the exit code. */
export type HealthCheckResult = { exitCode: 0 | 1; report: unknown; problem: string | null };

/**
 * Ask a running Weir's `/health` at `baseUrl`: exit code 0 while it is `ok` or `degraded`, 1 while
 * it is `failing`, does not answer within `timeoutMs`, or answers something that is not a report.
 */
export async function checkHealth(baseUrl: string, timeoutMs = 5000): Promise<HealthCheckResult> {
  const url = `${baseUrl.replace(/\/+$/, '')}/health`;
  // What is said about it never shows a password the URL carries.
  const shown = maskUserinfo(url);
  let response: Response;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  } catch (error) {
    const why =
      error instanceof Error && error.name === 'TimeoutError'
        ? `no answer within ${timeoutMs} ms`
        : 'no answer (is weir serve running there?)';
    return { exitCode: 1, report: null, problem: `${shown}: ${why}` };
  }
  let report: unknown;
  try {
    report = await response.json();
  } catch {
    return { exitCode: 1, report: null, problem: `${shown} answered ${response.status} without a health report` };
  }
  const status = typeof report === 'object' && report !== null ? (report as { status?: unknown }).status : undefined;
  if (status === 'ok' || status === 'degraded')
    return { exitCode: 0, report, problem: status === 'degraded' ? 'degraded: see the checks' : null };
  if (status === 'failing') return { exitCode: 1, report, problem: 'failing: see the checks' };
  return { exitCode: 1, report: null, problem: `${shown} answered ${response.status} without a health report` };
}
