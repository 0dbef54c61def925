import type { EventEnvelope } from '@exactly-once/runtime/envelope';

/** The suffix a forged new eventId carries: the verdict finds any claim of such an id (an effect nobody produced). */
export const FORGED_EVENT_ID_SUFFIX = '.forged-in-dlq';

/**
 * The `dlqForgeries` fault's two messages for one published event: a known eventId with other content
 * (the domain's forge), and that content under a new eventId no producer wrote, one version newer.
 *
 * @example
 * ```ts
 * const [knownId, newId] = dlqForgeries(event, (e) => domain.forge(e));
 * ```
 */
export function dlqForgeries(
  event: EventEnvelope,
  forge: (event: EventEnvelope) => EventEnvelope,
): [knownId: EventEnvelope, newId: EventEnvelope] {
  const forged = forge(event);
  // One version past the real event's, so a consumer's version guard takes it for the entity's newer event.
  return [forged, { ...forged, eventId: `${event.eventId}${FORGED_EVENT_ID_SUFFIX}`, version: event.version + 1 }];
}

/**
 * Whether a consumer's DLQ takes a message from this sender. The deployed DLQs have a queue policy
 * (the stack's `QueueSenders` synth rule checks it) that denies `sqs:SendMessage` to every principal
 * but the consumer's function role, the operator roles and SQS's own dead-lettering; the simulation
 * models its effect on the forger's send, not the policy document. Off (`dlqSenderPolicy=false`): any
 * principal with an ordinary SendMessage grant may put a message there.
 *
 * @example
 * ```ts
 * if (!dlqAcceptsForger(guards.dlqSenderPolicy)) scheduler.fault('forged-dlq-send-denied', eventId);
 * ```
 */
export function dlqAcceptsForger(dlqSenderPolicy: boolean): boolean {
  return !dlqSenderPolicy;
}
