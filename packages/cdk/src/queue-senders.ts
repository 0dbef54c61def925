import * as iam from 'aws-cdk-lib/aws-iam';
import type * as sqs from 'aws-cdk-lib/aws-sqs';

/**
 * The statement id of the deny that keeps a consumer's source queue for its producers: the
 * QueueSenders rule (aspects/queue-senders.ts) looks for a statement like it.
 *
 * @example
 * ```ts
 * const deny = policy.Statement.find((statement) => statement.Sid === ONLY_PRODUCERS_SEND_SID);
 * ```
 */
export const ONLY_PRODUCERS_SEND_SID = 'OnlyProducersSend';

/**
 * The statement id of the deny that keeps a consumer's dead-letter queue for its consumer and the
 * operator roles (allowOnlyDeadLetterSenders); the QueueSenders rule checks every consumed queue's
 * DLQ for a statement like it.
 *
 * @example
 * ```ts
 * const deny = policy.Statement.find((statement) => statement.Sid === ONLY_CONSUMER_DEAD_LETTERS_SID);
 * ```
 */
export const ONLY_CONSUMER_DEAD_LETTERS_SID = 'OnlyConsumerDeadLetters';

/**
 * Lets only `senders` (role ARNs: the outbox relay's and sweeper's, and an operator role that
 * redrives dead-lettered messages) send to `queue`: a Deny of `sqs:SendMessage` (which covers
 * SendMessageBatch) to every principal whose `aws:PrincipalArn` is not one of them. An assumed
 * role's sessions carry the role's ARN there, so a function's role is matched whatever its session.
 *
 * Why: a consumer trusts a message's `eventId` as its dedupe key. Anyone else able to send to
 * the queue could get a forged copy there before the relay, and the real event would meet a
 * claim it did not write. Fingerprints catch that (EventIdReused) instead of swallowing it;
 * this keeps the forger out in the first place. An IAM grant alone cannot: any principal of the
 * account with `sqs:SendMessage` on `*` could still send.
 *
 * @example The outbox wiring does this for every consumer's queue (outbox-wiring.ts)
 * ```ts
 * allowOnlySenders(queues.queue, [outbox.streamRelay.fn.role!.roleArn, outbox.sweeper.fn.role!.roleArn, operatorRoleArn]);
 * ```
 */
export function allowOnlySenders(queue: sqs.IQueue, senders: readonly string[]): void {
  denySendingExcept(queue, senders, ONLY_PRODUCERS_SEND_SID, 'allowOnlySenders');
}

/**
 * Lets only `senders` (role ARNs: the consumer's function role, which copies a permanent failure to
 * its DLQ itself, and the operator roles) send to a consumer's dead-letter queue; SQS's own
 * dead-lettering still moves messages there. The same Deny as allowOnlySenders.
 *
 * Why: `npm run dlq -- redrive` (and SQS's DLQ redrive) moves a DLQ's messages into the guarded
 * source queue as an operator role. A DLQ open to any principal with `sqs:SendMessage` would let a
 * forged envelope ride that redrive past the source queue's policy.
 *
 * What still works, and where AWS says so:
 * - SQS's move of a message past `maxReceiveCount` is not a `SendMessage` request: the Amazon SQS
 *   Developer Guide ("Using dead-letter queues", troubleshooting: `NumberOfMessagesSent` and
 *   `NumberOfMessagesReceived` of a DLQ don't match) says a message sent to a DLQ by hand is counted
 *   in `NumberOfMessagesSent` and one moved there after failed processing is not. Should the move be
 *   authorized as the SQS service principal all the same, the Deny does not match it:
 *   `aws:PrincipalIsAWSService` is true for a service principal's own request (IAM User Guide,
 *   "AWS global condition context keys"), and a service principal still needs an Allow in this policy,
 *   which none has. Not observable locally: fauxqs enforces no queue policy.
 * - StartMessageMoveTask (DLQ -> source, the DLQ tool's redrive on AWS): its source is the DLQ and its
 *   destination the original source queue (SQS API Reference, StartMessageMoveTask). On the DLQ it
 *   receives and deletes, which this Deny leaves alone; it sends only to the source queue, whose own
 *   policy lets the operator roles send and, like this one, does not match a service principal.
 *
 * @example The pipelines do this for every consumer's DLQ (outbox-wiring.ts)
 * ```ts
 * allowOnlyDeadLetterSenders(queues.deadLetterQueue, [consumer.fn.role!.roleArn, ...operatorRoleArns]);
 * ```
 */
export function allowOnlyDeadLetterSenders(queue: sqs.IQueue, senders: readonly string[]): void {
  denySendingExcept(queue, senders, ONLY_CONSUMER_DEAD_LETTERS_SID, 'allowOnlyDeadLetterSenders');
}

function denySendingExcept(queue: sqs.IQueue, senders: readonly string[], sid: string, caller: string): void {
  if (senders.length === 0) throw new Error(`${caller}(${queue.node.path}): name at least one sender`);
  queue.addToResourcePolicy(
    new iam.PolicyStatement({
      sid,
      effect: iam.Effect.DENY,
      principals: [new iam.AnyPrincipal()],
      actions: ['sqs:SendMessage'],
      resources: [queue.queueArn],
      conditions: {
        ArnNotEquals: { 'aws:PrincipalArn': [...senders] },
        // An AWS service acting as itself (true) is left to the policy's Allows, of which there are none:
        // what this keeps open is SQS's own dead-lettering and redrive, whatever principal they are judged as.
        BoolIfExists: { 'aws:PrincipalIsAWSService': 'false' },
      },
    }),
  );
}
