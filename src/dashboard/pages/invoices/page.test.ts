import test from 'ava';
import { noticeOf } from './page.tsx';

test('finalizing a renewal on the dashboard, which also mails it, says it was mailed; a plain finalize says only finalized', (t) => {
  t.is(
    noticeOf('finalized', { sentAt: '2026-02-01T00:00:00.000Z' }),
    'Invoice finalized and mailed to its customer: its page and pay link are live.',
  );
  t.is(noticeOf('finalized', { sentAt: null }), 'Invoice finalized: its page and pay link are live.');
  t.is(noticeOf('sent', { sentAt: '2026-02-01T00:00:00.000Z' }), 'Invoice sent.');
  t.is(noticeOf('nonsense', { sentAt: null }), null);
});
