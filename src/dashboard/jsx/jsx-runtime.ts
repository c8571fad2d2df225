/**
 * The JSX runtime of the dashboard (tsconfig's `jsxImportSource`, package.json's `#weir-jsx`): @kitajs/html's,
 * each attribute value of an element written with its `&` as `&amp;`. kitajs escapes only `"` there, and a
 * browser decodes character references in attributes: a customer named `Tom &amp; Jerry` in `<input value>`
 * read `Tom & Jerry`, and saving the form changed the name. Components get their props as given.
 */
import type { Children } from '@kitajs/html';
import { Fragment, jsx as kitaJsx, jsxs as kitaJsxs } from '@kitajs/html/jsx-runtime';

type Name = Parameters<typeof kitaJsx>[0];
type Attributes = { children?: Children; [name: string]: unknown };

const amp = (text: string): string => (text.includes('&') ? text.replaceAll('&', '&amp;') : text);
const escapeItem = (item: unknown): unknown => (typeof item === 'string' ? amp(item) : item);

/** As kitajs writes `value` (strings, a `class` list, a `style` or `attrs` object, any other object's `toString()`), `&` escaped. */
function escapeValue(name: string, value: unknown): unknown {
  if (typeof value === 'string') return amp(value);
  if (typeof value !== 'object' || value === null || value instanceof Date) return value;
  if (name === 'class' && Array.isArray(value))
    return value.some((item) => typeof item === 'string' && item.includes('&')) ? value.map(escapeItem) : value;
  if (name === 'style' || name === 'attrs') return escapeAttributes(value as Attributes);
  return amp(String(value));
}

/**
 * `attributes` with `&` escaped in what kitajs writes of each value; the same object when nothing changes.
 * Left alone: `children`, kitajs's own `safe` and `of`, and an `attrs` string (raw markup by design).
 */
export function escapeAttributes<T extends Attributes>(attributes: T): T {
  let escaped: Record<string, unknown> | undefined;
  for (const name in attributes) {
    if (name === 'children' || name === 'safe' || name === 'of') continue;
    const value = attributes[name];
    if (name === 'attrs' && typeof value === 'string') continue;
    const written = escapeValue(name, value);
    if (written === value) continue;
    escaped ??= { ...attributes };
    escaped[name] = written;
  }
  return (escaped ?? attributes) as T;
}

export function jsx(name: Name, attributes: Attributes): JSX.Element {
  return kitaJsx(name, typeof name === 'string' ? escapeAttributes(attributes) : attributes);
}

export function jsxs(name: Name, attributes: Attributes & { children: Children[] }): JSX.Element {
  return kitaJsxs(name, typeof name === 'string' ? escapeAttributes(attributes) : attributes);
}

export { Fragment };
