import type { EventEnvelope } from '@exactly-once/runtime/envelope';

/**
 * The events the bench's direct measurements consume (the three consumers, the fault comparison, the
 * emulator limit): envelopes of no domain, for the mechanism's generic entity effect, which takes any
 * payload. What they cost is the mechanism's; the domain's own effects run in the pipeline, measured
 * through the stack's functions.
 */
export const BENCH_EVENT_TYPE = 'BenchHappened';

/**
 * Events `offset`..`offset + count - 1` of a run, each on an entity of its own (`<runId>-e<n>`,
 * version 1): an entity's count then says how many times its one event was applied, and no event is
 * ever stale behind another of its entity, whatever order concurrent deliveries take.
 */
export function benchEvents(runId: string, count: number, offset = 0): EventEnvelope[] {
  const occurredAt = new Date().toISOString();
  return Array.from({ length: count }, (_, i) => {
    const entityId = `${runId}-e${offset + i}`;
    return {
      eventId: `${entityId}.happened`,
      type: BENCH_EVENT_TYPE,
      entityId,
      version: 1,
      occurredAt,
      payload: { n: offset + i },
    };
  });
}
