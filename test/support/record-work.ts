import type { RecordWork } from '@exactly-once/runtime/consumer/record-work';

/**
 * A record's work for tests that call a use case or a ledger directly: a
 * signal of its own (abort it with `controller`), a deadline `deadlineMs` from
 * now and a lease until 2 s after it, held by `leaseHolder`.
 */
export function recordWork(options: { deadlineMs?: number; leaseHolder?: string; now?: number } = {}) {
  const controller = new AbortController();
  const deadline = (options.now ?? Date.now()) + (options.deadlineMs ?? 25_000);
  const work: RecordWork = {
    signal: controller.signal,
    deadline,
    leaseUntil: deadline + 7_000,
    leaseHolder: options.leaseHolder ?? 'test-request:test-message',
  };
  return { work, controller };
}

/** Work that never aborts, for tests of what happens inside the deadline. */
export const UNBOUNDED_WORK: RecordWork = recordWork({ deadlineMs: 3_600_000 }).work;
