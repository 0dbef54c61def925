/**
 * Guard `queueSenders` (packages/cdk/src/queue-senders.ts): the consumer queues' sender policy lets
 * only the relay and the sweeper send, so a forger's send (the `forgedFirst` fault) is denied. Off: it
 * reaches the queue. (The DLQs' own policy is guard `dlqSenderPolicy`, dlq-forgery.ts.)
 */
export function queueAcceptsForger(queueSenders: boolean): boolean {
  return !queueSenders;
}
