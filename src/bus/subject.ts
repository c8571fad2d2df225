import { BusArgumentError } from './errors.ts';

/*
 * NATS subject rules, as the bus uses them: tokens are separated by `.`, may not be empty and may
 * not contain whitespace. In a filter `*` matches exactly one token and `>` (last token only)
 * matches one or more tokens.
 */

const whitespace = /\s/;

function tokensOf(subject: string, what: string): string[] {
  if (subject === '') throw new BusArgumentError(`${what} is empty`);
  const tokens = subject.split('.');
  for (const token of tokens) {
    if (token === '') throw new BusArgumentError(`${what} "${subject}" has an empty token`);
    if (whitespace.test(token)) throw new BusArgumentError(`${what} "${subject}" contains whitespace`);
  }
  return tokens;
}

/** Throws a BusArgumentError unless `subject` is a literal subject one can publish to. */
export function assertPublishSubject(subject: string): void {
  for (const token of tokensOf(subject, 'subject')) {
    if (token.includes('*') || token.includes('>')) {
      throw new BusArgumentError(`subject "${subject}" contains a wildcard; publish to a literal subject`);
    }
  }
}

/** Throws a BusArgumentError unless `filter` is a valid subject filter. */
export function assertSubjectFilter(filter: string): void {
  const tokens = tokensOf(filter, 'filter subject');
  tokens.forEach((token, index) => {
    if (token === '>' && index !== tokens.length - 1) {
      throw new BusArgumentError(`filter subject "${filter}" has ">" before its last token`);
    }
    if (token !== '*' && token !== '>' && (token.includes('*') || token.includes('>'))) {
      throw new BusArgumentError(`filter subject "${filter}" has a wildcard inside the token "${token}"`);
    }
  });
}

/** Whether the literal `subject` matches `filter` (`*` one token, `>` one or more trailing tokens). */
export function subjectMatchesFilter(filter: string, subject: string): boolean {
  const filterTokens = filter.split('.');
  const subjectTokens = subject.split('.');
  for (let index = 0; index < filterTokens.length; index++) {
    const filterToken = filterTokens[index];
    if (filterToken === '>') return subjectTokens.length > index;
    const subjectToken = subjectTokens[index];
    if (subjectToken === undefined) return false;
    if (filterToken !== '*' && filterToken !== subjectToken) return false;
  }
  return filterTokens.length === subjectTokens.length;
}

const durableNamePattern = /^[A-Za-z0-9_-]+$/;

/** Durable names are used as NATS API tokens: letters, digits, `_` and `-` only. */
export function assertDurableName(durableName: string): void {
  if (!durableNamePattern.test(durableName)) {
    throw new BusArgumentError(`durable name "${durableName}" is invalid: use letters, digits, "_" and "-" only`);
  }
}

/** A `continueFrom` must be a valid durable name other than the durable's own. */
export function assertContinueFrom(durableName: string, continueFrom: string | undefined): void {
  if (continueFrom === undefined) return;
  assertDurableName(continueFrom);
  if (continueFrom === durableName)
    throw new BusArgumentError(`durable consumer "${durableName}" cannot continue from itself`);
}
