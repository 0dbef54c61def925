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
  if (senders.length === 0) throw new Error(`allowOnlySenders(${queue.node.path}): name at least one sender`);
  queue.addToResourcePolicy(
    new iam.PolicyStatement({
      sid: ONLY_PRODUCERS_SEND_SID,
      effect: iam.Effect.DENY,
      principals: [new iam.AnyPrincipal()],
      actions: ['sqs:SendMessage'],
      resources: [queue.queueArn],
      conditions: { ArnNotEquals: { 'aws:PrincipalArn': [...senders] } },
    }),
  );
}
