/**
 * The canonical text of a JSON document, so that two documents that mean the same compare equal as
 * strings: whitespace dropped, object keys sorted (by UTF-16 code units) at every depth, a key given
 * twice kept with its last value (as `JSON.parse` does), strings re-escaped the one way
 * `JSON.stringify` writes them (`"\u0041"` is `"A"`). Array order is kept: it is meaning.
 *
 * Numbers never pass through `Number` (a digit string past 2^53 would lose digits): each is reduced
 * exactly to its decimal value, digits without leading or trailing zeros and a power of ten, so
 * `1`, `1.0`, `1.00` and `10e-1` are the same number (they parse to the same value for every
 * handler), while `9007199254740993` and `9007199254740992` stay apart. `-0` is `0`.
 *
 * Returns null when `text` is not one JSON value, or nests deeper than `MAX_DEPTH` (the caller then
 * compares the bytes). Whitespace only (no body) is the empty string.
 */
export function canonicalJson(text: string): string | null {
  let at = 0;
  const skipSpace = () => {
    for (;;) {
      const c = text.charCodeAt(at);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) at++;
      else return;
    }
  };
  skipSpace();
  if (at === text.length) return '';
  try {
    const canonical = value(0);
    skipSpace();
    return at === text.length ? canonical : null;
  } catch (error) {
    if (error instanceof NotJson || error instanceof SyntaxError) return null;
    throw error;
  }

  function value(depth: number): string {
    if (depth > MAX_DEPTH) throw new NotJson();
    const c = text[at];
    if (c === '{') return object(depth);
    if (c === '[') return array(depth);
    if (c === '"') return JSON.stringify(string());
    for (const literal of LITERALS) {
      if (text.startsWith(literal, at)) {
        at += literal.length;
        return literal;
      }
    }
    return number();
  }

  function object(depth: number): string {
    at++;
    const members = new Map<string, string>();
    skipSpace();
    if (text[at] === '}') {
      at++;
      return '{}';
    }
    for (;;) {
      skipSpace();
      if (text[at] !== '"') throw new NotJson();
      const key = string();
      skipSpace();
      if (text[at] !== ':') throw new NotJson();
      at++;
      skipSpace();
      // Deleted first, so a repeated key keeps its last value and only one place.
      members.delete(key);
      members.set(key, value(depth + 1));
      skipSpace();
      const c = text[at++];
      if (c === '}') break;
      if (c !== ',') throw new NotJson();
    }
    const keys = [...members.keys()].sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${members.get(key)}`).join(',')}}`;
  }

  function array(depth: number): string {
    at++;
    const items: string[] = [];
    skipSpace();
    if (text[at] === ']') {
      at++;
      return '[]';
    }
    for (;;) {
      skipSpace();
      items.push(value(depth + 1));
      skipSpace();
      const c = text[at++];
      if (c === ']') break;
      if (c !== ',') throw new NotJson();
    }
    return `[${items.join(',')}]`;
  }

  /** A string's value; `JSON.parse` of its own text checks its escapes and control characters. */
  function string(): string {
    const start = at;
    at++;
    for (;;) {
      const c = text[at];
      if (c === undefined) throw new NotJson();
      if (c === '\\') at += 2;
      else if (c === '"') break;
      else at++;
    }
    at++;
    return JSON.parse(text.slice(start, at)) as string;
  }

  function number(): string {
    NUMBER.lastIndex = at;
    const match = NUMBER.exec(text);
    if (!match) throw new NotJson();
    at = NUMBER.lastIndex;
    const [, sign, whole, fraction = '', exponent = '0'] = match;
    let digits = (whole! + fraction).replace(/^0+/, '');
    if (digits === '') return '0';
    let power = BigInt(exponent) - BigInt(fraction.length);
    const trimmed = digits.replace(/0+$/, '');
    power += BigInt(digits.length - trimmed.length);
    digits = trimmed;
    return `${sign}${digits}${power === 0n ? '' : `e${power}`}`;
  }
}

/** Deeper documents are compared by their bytes; no request body of Weir's nests anywhere near this. */
export const MAX_DEPTH = 256;
const LITERALS = ['true', 'false', 'null'] as const;
const NUMBER = /(-?)(0|[1-9]\d*)(?:\.(\d+))?(?:[eE]([+-]?\d+))?/y;

class NotJson extends Error {}
