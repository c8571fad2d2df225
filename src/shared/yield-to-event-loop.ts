import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * Lets timers, I/O and other requests run before a loop goes on. A loop over work whose steps
 * resolve without I/O (the embedded stores answer at once) would otherwise run in microtasks
 * only and starve the whole process: no request answered, no signal handled.
 */
export const yieldToEventLoop = (): Promise<void> => nextTurn();
