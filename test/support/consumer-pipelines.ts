import { IntrinsicResolver } from '../../tools/local-runtime/template/intrinsics';
import type { CfnTemplate } from '../../tools/local-runtime/template/model';
import type { Template } from 'aws-cdk-lib/assertions';
import { consumerOutputNames, type ConsumerSpec } from '../../lambdas/exactly-once/consumer-spec';
import { parseRoutes, type ConsumerRoute } from '../../lambdas/exactly-once/outbox/routes';
import { ENV } from '../../lambdas/exactly-once/env-names';
import { unusedConsumerName } from './consumer-list';
import { referencedId, resourceById, resourcesOfType } from './template';

/**
 * A consumer's pipeline read from a synthesized template, by following
 * references from the stack output tools use to find its queue (output ->
 * queue -> event source mapping -> function; queue -> redrive -> DLQ), never
 * by logical id.
 */
export interface TemplatePipeline {
  /** The event source mapping's logical id (its Ref is the mapping's UUID). */
  mappingId: string;
  queueId: string;
  dlqId: string;
  functionId: string;
  mapping: Record<string, unknown>;
}

/**
 * A third consumer for infra tests: standard, on OrderPlaced, running the
 * loyalty entry point, with batch settings unlike the other consumers', so
 * they can only come from this spec. Named 'audit' unless a consumer on the
 * list already is (then 'audit-2', ...); its outputs are
 * `consumerOutputNames(THIRD_CONSUMER.name)`.
 */
export const THIRD_CONSUMER: ConsumerSpec = Object.freeze({
  name: unusedConsumerName('audit'),
  fifo: false,
  eventTypes: Object.freeze(['OrderPlaced']),
  entry: 'lambdas/shop/entry-points/loyalty-consumer.ts',
  batchSize: 5,
  batchingWindowSeconds: 3,
  maxConcurrency: 4,
});

const outputsOf = (template: Template) =>
  (template.toJSON() as { Outputs?: Record<string, { Value: unknown }> }).Outputs ?? {};

/** Every SQS-sourced event source mapping, with its queue, the queue's DLQ and the consumer function. */
export function sqsPipelines(template: Template): TemplatePipeline[] {
  return resourcesOfType(template, 'AWS::Lambda::EventSourceMapping')
    .map(([mappingId, m]) => ({ mappingId, mapping: (m.Properties ?? {}) as Record<string, unknown> }))
    .filter(({ mapping }) => {
      const source = referencedId(mapping.EventSourceArn);
      return source !== undefined && resourceById(template, source).Type === 'AWS::SQS::Queue';
    })
    .map(({ mappingId, mapping }) => {
      const queueId = referencedId(mapping.EventSourceArn) as string;
      const redrive = resourceById(template, queueId).Properties?.RedrivePolicy as
        { deadLetterTargetArn?: unknown } | undefined;
      const dlqId = referencedId(redrive?.deadLetterTargetArn);
      if (dlqId === undefined) throw new Error(`Queue ${queueId} has no dead-letter queue`);
      return { mappingId, mapping, queueId, dlqId, functionId: referencedId(mapping.FunctionName) as string };
    });
}

/** The pipeline of the consumer `name`, from its outputs `<Id>QueueUrl` / `<Id>DlqUrl`; throws unless exactly one. */
export function pipelineOf(template: Template, name: string): TemplatePipeline {
  const names = consumerOutputNames(name);
  const outputs = outputsOf(template);
  const queueId = referencedId(outputs[names.queueUrl]?.Value);
  const dlqId = referencedId(outputs[names.deadLetterQueueUrl]?.Value);
  const matches = sqsPipelines(template).filter((p) => p.queueId === queueId && p.dlqId === dlqId);
  if (matches.length !== 1)
    throw new Error(`Consumer ${name}: ${matches.length} pipelines behind outputs ${JSON.stringify(names)}`);
  return matches[0];
}

/**
 * A function's CONSUMER_ROUTES as the relay parses it, each queue URL (a Ref
 * in the template) written as the queue's logical id.
 */
export function routesOf(template: Template, functionId: string): ConsumerRoute[] {
  const variables = (resourceById(template, functionId).Properties?.Environment as { Variables?: object } | undefined)
    ?.Variables as Record<string, unknown> | undefined;
  const value = variables?.[ENV.consumerRoutes];
  if (value === undefined) throw new Error(`Function ${functionId} has no ${ENV.consumerRoutes}`);
  // Resolved as the local runtime resolves it (the stack writes a JSON string joined around the queues' Refs),
  // each Ref standing as its logical id; then parsed as the relay parses it at cold start.
  const refs = { ref: (id: string) => id, getAtt: (id: string, attribute: string) => `${id}.${attribute}` };
  const json = new IntrinsicResolver(template.toJSON() as CfnTemplate, refs, {}).resolveString(
    value,
    ENV.consumerRoutes,
  );
  return parseRoutes(json, ENV.consumerRoutes);
}

/** The routes a list of specs should give the relay, queue URLs as the logical ids of their queues in `template`. */
export function expectedRoutes(template: Template, specs: readonly ConsumerSpec[]): ConsumerRoute[] {
  return specs.map((spec) => ({
    consumer: spec.name,
    queueUrl: pipelineOf(template, spec.name).queueId,
    fifo: spec.fifo,
    eventTypes: [...spec.eventTypes],
  }));
}

/** Every metric of the dashboard, as CloudWatch's metric arrays (namespace, name, dimension pairs..., options). */
export function dashboardMetrics(template: Template): unknown[][] {
  const [[, dashboard]] = resourcesOfType(template, 'AWS::CloudWatch::Dashboard');
  const body = (dashboard.Properties as { DashboardBody: { 'Fn::Join': [string, unknown[]] } }).DashboardBody[
    'Fn::Join'
  ][1]
    .map((part) => (typeof part === 'string' ? part : JSON.stringify(part).replaceAll('"', "'")))
    .join('');
  const widgets = (JSON.parse(body) as { widgets: { properties?: { metrics?: unknown[][] } }[] }).widgets;
  return widgets.flatMap((w) => w.properties?.metrics ?? []);
}
