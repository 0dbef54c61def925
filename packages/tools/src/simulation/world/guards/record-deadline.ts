import type { Invocation } from '../invocation';

/**
 * Guard `recordDeadline` (queue-consumer.ts): a record's deadline, aborted before the function's
 * timeout, so a hung record fails like a transient error and its batch-mates are acked. Off (the code
 * before it): the deadline's timer never fires, so a hung call holds its batch until Lambda stops the
 * function, and nothing is acked.
 */
export function recordTimer(on: boolean, invocation: Invocation): (ms: number, fire: () => void) => () => void {
  return on ? (ms, fire) => invocation.timer(ms, fire) : () => () => undefined;
}
