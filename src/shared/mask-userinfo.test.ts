import test from 'ava';
import { maskUserinfo } from './mask-userinfo.ts';

test('a user and password in a URL, well formed or not, are masked; a URL without them is shown as is', (t) => {
  t.is(maskUserinfo('http://u:secret@host'), 'http://***@host');
  t.is(maskUserinfo('ftp://u:secret@host:21/path?q=1'), 'ftp://***@host:21/path?q=1');
  t.is(maskUserinfo('http:/u:p@ss@host'), 'http:/***@host');
  t.is(maskUserinfo('u:secret@host'), '***@host');
  t.is(maskUserinfo('https://pay.example.com/x?to=a@b'), 'https://pay.example.com/x?to=a@b');
  t.is(maskUserinfo('127.0.0.1:8080'), '127.0.0.1:8080');
});
