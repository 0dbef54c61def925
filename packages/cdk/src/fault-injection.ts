import { Duration, Stack, Tags } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as ssm from 'aws-cdk-lib/aws-ssm';
import { Construct } from 'constructs';
import { FAULT_PARAMETER_ENV, FAULT_PLAN_ACTIVE_METRIC } from '@exactly-once/runtime/faults/names';
import { METRICS_NAMESPACE, serviceName } from './function-defaults';

/**
 * The tag that marks the functions faults are aimed at, with the value
 * `<stack name>:consumer` or `<stack name>:relay`: an AWS FIS experiment
 * selects its targets by it (packages/tools/src/proof-kit/aws/fis-lambda-faults.json), so a
 * consumer added to the list is a target without editing the experiment (FIS
 * also takes at most five ARNs per target), and another stage's functions are
 * not. Only the Lambda functions carry it, not their roles or log groups.
 *
 * @example An FIS experiment's target: every consumer of this stack
 * ```ts
 * targets: { Consumers: { resourceType: 'aws:lambda:function', resourceTags: { [FAULT_TARGET_TAG]: `${stack.stackName}:consumer` }, selectionMode: 'ALL' } },
 * ```
 */
export const FAULT_TARGET_TAG = 'exactly-once-effects:fault-target';

/**
 * Marks `fn` as a target of the proof kit's AWS FIS faults of its `role`, with FAULT_TARGET_TAG
 * (`<stack name>:<role>`). ConsumerPipelines tags every consumer and OutboxRelay the relay; a
 * function made outside them that should take the same faults is tagged the same way.
 *
 * @example
 * ```ts
 * tagFaultTarget(consumer.fn, 'consumer');
 * ```
 */
export function tagFaultTarget(fn: lambda.IFunction, role: 'consumer' | 'relay'): void {
  Tags.of(fn).add(FAULT_TARGET_TAG, `${Stack.of(fn).stackName}:${role}`, {
    includeResourceTypes: ['AWS::Lambda::Function'],
  });
}

/**
 * The proof kit's fault-injection switch on AWS: an SSM parameter holding the
 * run's fault plan as JSON (see packages/runtime/src/faults/plan.ts). It is `{}` (no
 * faults) as deployed; `npm run loadtest -- --stack NAME --faults ...` sets it
 * for a run, with an expiry, and puts `{}` back afterwards. Functions re-read it
 * every few seconds. The stack creates it only when synthesized with
 * `-c faultInjection=true`, which the configuration never allows in prod: one
 * PutParameter on it switches faults on with no deploy.
 *
 * @example Only when asked for, attached to the functions that take faults, as ExactlyOnce builds it (packages/cdk/src/exactly-once.ts)
 * ```ts
 * if (faultInjection) {
 *   this.faultSwitch = new FaultInjectionSwitch(this, 'FaultInjection');
 *   for (const f of [this.outbox.streamRelay, ...this.pipelines.map((p) => p.consumer)]) this.faultSwitch.attach(f.fn);
 * }
 * ```
 */
export class FaultInjectionSwitch extends Construct {
  readonly parameter: ssm.StringParameter;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.parameter = new ssm.StringParameter(this, 'Plan', {
      description:
        'Fault plan for load tests (JSON with an expiresAt). {} = no faults. Never enable on a system whose numbers matter.',
      stringValue: '{}',
    });
  }

  /** Lets a function read the switch and tells it where the switch is. */
  attach(fn: lambda.Function): void {
    fn.addEnvironment(FAULT_PARAMETER_ENV, this.parameter.parameterName);
    this.parameter.grantRead(fn);
  }

  /**
   * Invocations that ran under a fault plan, per minute, summed over the
   * functions that take faults: the relay (no dimension besides the service)
   * and each consumer (its `consumer` dimension, as the consumers emit it).
   */
  activePlanMetric(consumers: readonly string[]): cloudwatch.IMetric {
    const metric = (dimensions: Record<string, string>) =>
      new cloudwatch.Metric({
        namespace: METRICS_NAMESPACE,
        metricName: FAULT_PLAN_ACTIVE_METRIC,
        dimensionsMap: { service: serviceName(this), ...dimensions },
        statistic: 'Sum',
        period: Duration.minutes(1),
      });
    const usingMetrics: Record<string, cloudwatch.IMetric> = { relay: metric({}) };
    consumers.forEach((consumer, i) => (usingMetrics[`consumer${i}`] = metric({ consumer })));
    return new cloudwatch.MathExpression({
      expression: Object.keys(usingMetrics)
        .map((id) => `FILL(${id}, 0)`)
        .join(' + '),
      usingMetrics,
      label: 'Invocations under a fault plan',
      period: Duration.minutes(1),
    });
  }
}
