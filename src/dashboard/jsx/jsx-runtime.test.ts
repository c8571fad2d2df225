import test from 'ava';
import { Field } from '../ui/components.tsx';
import { escapeAttributes, Fragment, jsx, jsxs } from './jsx-runtime.ts';

test('a string attribute value is written with its & as &amp; (and its " as kitajs writes it), so a browser reads it back as given', async (t) => {
  const input = (value: string) => jsx('input', { value });
  t.is(await input('Tom &amp; Jerry'), '<input value="Tom &amp;amp; Jerry"/>');
  t.is(await input('&lt;b&gt;'), '<input value="&amp;lt;b&amp;gt;"/>');
  t.is(await input('R&D &copy=2 &copy'), '<input value="R&amp;D &amp;copy=2 &amp;copy"/>');
  t.is(await input('say "&quot;"'), '<input value="say &#34;&amp;quot;&#34;"/>');
  t.is(await input('plain <text>'), '<input value="plain <text>"/>');
  t.is(
    await jsxs('a', { href: '/x?a=1&b=2', 'hx-get': '/y?c=3&d=4', children: ['go'] }),
    '<a href="/x?a=1&amp;b=2" hx-get="/y?c=3&amp;d=4">go</a>',
  );
});

test('values that are not strings are written as before: numbers, bigints, booleans, dates, absent ones; an object by its toString, escaped', async (t) => {
  const at = new Date('2026-12-02T00:00:00.000Z');
  t.is(
    await jsx('input', {
      size: 5,
      max: 10n,
      disabled: true,
      hidden: false,
      title: undefined,
      alt: null,
      'data-at': at,
    }),
    '<input size="5" max="10" disabled data-at="2026-12-02T00:00:00.000Z"/>',
  );
  t.is(
    await jsx('a', { href: new URL('https://shop.example/?a=1&b=2') }),
    '<a href="https://shop.example/?a=1&amp;b=2"></a>',
  );
});

test('a class list, a style and an attrs object are escaped as written; an attrs string is raw markup, children and component props are left alone', async (t) => {
  t.is(await jsx('p', { class: ['a&b', false, 'c'] }), '<p class="a&amp;b c"></p>');
  t.is(await jsx('p', { style: 'content: "&"' }), '<p style="content: &#34;&amp;&#34;"></p>');
  t.is(await jsx('p', { style: { fontFamily: 'A&B' } }), '<p style="font-family:A&amp;B;"></p>');
  t.is(await jsx('p', { attrs: { title: 'a&b' } }), '<p title="a&amp;b"></p>');
  t.is(await jsx('p', { attrs: 'title="a&amp;b"' }), '<p title="a&amp;b"></p>');
  t.is(await jsx('p', { title: 'x&y', children: 'a &amp; b' }), '<p title="x&amp;y">a &amp; b</p>');
  t.is(await jsx('tag', { of: 'custom-el', title: 'x&y' }), '<custom-el title="x&amp;y"></custom-el>');
  const seen: unknown[] = [];
  const Component = (props: { label: string }): string => {
    seen.push(props.label);
    return props.label;
  };
  t.is(await jsx(Component, { label: 'a&b' }), 'a&b');
  t.deepEqual(seen, ['a&b']);
  t.is(await jsxs(Fragment, { children: ['a', 'b'] }), 'ab');
  const clean = { value: 'no ampersand', n: 1, class: ['a', false], style: { color: 'red' } };
  t.is(escapeAttributes(clean), clean, 'nothing to escape: the same object, no copy');
});

test('the dashboard’s JSX runs through it (tsconfig’s jsxImportSource): a field prefilled with stored text reads back as stored', async (t) => {
  const html = await Field({ name: 'name', label: 'Name', value: 'Tom &amp; Jerry' });
  t.regex(html, /<input[^>]* value="Tom &amp;amp; Jerry"/);
});
