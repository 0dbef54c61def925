import { Token } from 'aws-cdk-lib';
import { alarmActionDelivery, alarmActions, CLOUDWATCH_PRINCIPAL } from './alarm-delivery-policy';
import { CorrectnessAspect } from './correctness-aspect';
import { Unverifiable, type RenderedResource, type StackModel } from './model';

import { CLOUDWATCH_ALARM } from '../template';

export { CLOUDWATCH_ALARM };

/**
 * Rule AlarmDelivery: every SNS action of every CloudWatch alarm is a topic
 * CloudWatch can publish to. Its topic policy (if it has one) allows
 * `cloudwatch.amazonaws.com` to `sns:Publish` for that alarm and this account,
 * no statement denies it, and a topic encrypted with a KMS key has a key
 * policy that allows CloudWatch `kms:Decrypt` and `kms:GenerateDataKey*`.
 *
 * Why: a topic policy replaces SNS's default one (which lets this account's
 * services publish); `enforceSSL` alone creates one that holds only a TLS
 * Deny. The alarm then changes state, CloudWatch is refused, and nobody is
 * told: the failure is visible only in the alarm's history. Likewise for a
 * topic key CloudWatch may not use, such as the AWS-managed alias/aws/sns.
 *
 * The judgement is `alarmActionDelivery` (alarm-delivery-policy.ts), the same
 * function the local runtime uses. A topic or key outside this stack cannot be
 * read: it is reported as unverifiable. The error is on the alarm.
 *
 * @example applyCorrectnessAspects registers it with the others; alone, e.g. in a test of this one rule
 * ```ts
 * Aspects.of(stack).add(new AlarmDeliveryAspect(), { priority: AspectPriority.READONLY });
 * ```
 */
export class AlarmDeliveryAspect extends CorrectnessAspect {
  readonly rule = 'AlarmDelivery' as const;
  protected readonly resourceType = CLOUDWATCH_ALARM;

  protected check(alarm: RenderedResource, model: StackModel): void {
    const lookup = model.lookup;
    const account = model.stack.account;
    const env = { accounts: Token.isUnresolved(account) ? [] : [account] };
    for (const action of alarmActions({ Type: alarm.type, Properties: alarm.properties })) {
      this.guard(alarm, () => {
        const delivery = alarmActionDelivery(lookup, alarm.logicalId, action, env);
        if (delivery.kind === 'unverifiable') throw new Unverifiable(`alarm ${alarm.name}: ${delivery.reason}`);
        if (delivery.kind !== 'blocked') return;
        this.fail(
          alarm,
          `Alarm ${alarm.name} notifies topic ${lookup.name(delivery.topic)}, but CloudWatch could not publish to it: ` +
            `${delivery.reasons.join('; ')}. The alarm would change state and nobody would be told. ` +
            `Allow ${CLOUDWATCH_PRINCIPAL} sns:Publish in the topic policy (conditioned on aws:SourceAccount and aws:SourceArn) ` +
            'and, for an encrypted topic, kms:Decrypt and kms:GenerateDataKey* in its key policy.',
        );
      });
    }
  }
}
