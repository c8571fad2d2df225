import test from 'ava';
import { hashPassword, passwordProblem, verifyPassword } from './password.ts';

test('a password is hashed with argon2id and verifies only as itself', async (t) => {
  const hashed = await hashPassword('correct horse battery');
  t.regex(hashed, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
  t.not(await hashPassword('correct horse battery'), hashed, 'salted: two hashes of one password differ');
  t.true(await verifyPassword(hashed, 'correct horse battery'));
  t.false(await verifyPassword(hashed, 'correct horse batterY'));
  t.false(await verifyPassword('not a phc string', 'correct horse battery'), 'a broken hash is a no, not an error');
  t.false(await verifyPassword(null, 'correct horse battery'), 'no user: no');
});

test('a new password needs 10 to 256 characters, nothing else', (t) => {
  t.is(passwordProblem('short'), 'must be at least 10 characters');
  t.is(passwordProblem('x'.repeat(257)), 'must be at most 256 characters');
  t.is(passwordProblem('ten chars!'), null);
});
