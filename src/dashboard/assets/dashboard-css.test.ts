import { readFile } from 'node:fs/promises';
import test from 'ava';

// Measured in Chromium at 390 px (see the report of this change); here the rules that make it so stay put.
const css = await readFile(new URL('./dashboard.css', import.meta.url), 'utf8');
const narrow = css.slice(css.indexOf('@media (max-width: 860px)'));
const ruleOf = (text: string, selector: string) =>
  new RegExp(`(?:^|\\n)\\s*${selector.replace(/[.*]/g, '\\$&')} \\{([^}]*)\\}`).exec(text)?.[1] ?? '';

test('on a phone the nav wraps onto lines rather than scrolling off the screen with no cue, and the topbar wraps so the email is whole', (t) => {
  const nav = ruleOf(narrow, '.sidebar ul');
  t.regex(nav, /flex-wrap: wrap/);
  t.notRegex(nav, /overflow-x/);
  t.regex(ruleOf(narrow, '.topbar'), /flex-wrap: wrap/);
});

test('a table wider than its card scrolls inside it with a shadow at the edge that has more', (t) => {
  const wrap = ruleOf(css, '.table-wrap');
  t.regex(wrap, /overflow-x: auto/);
  t.regex(wrap, /no-repeat local[\s\S]*no-repeat scroll/);
  // A visually hidden header (absolutely placed) past the card's edge is clipped with the table, not the page's width.
  t.regex(wrap, /position: relative/);
});
