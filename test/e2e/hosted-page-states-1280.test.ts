import test from 'ava';
import { checkoutInEveryState, everyStateTitle } from '../support/hosted-page-states.ts';

// One width per file: each runs in its own worker, well inside ava's inactivity timeout.
test(everyStateTitle(1280), (t) => checkoutInEveryState(t, 1280));
