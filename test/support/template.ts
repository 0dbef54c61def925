import type { Stack } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { CfnTable } from 'aws-cdk-lib/aws-dynamodb';
import { consumerOutputNames, type ConsumerSpec } from '@exactly-once/runtime/consumer-spec';
import { ENV } from '@exactly-once/runtime/env-names';
import { parseRoutes, type ConsumerRoute } from '@exactly-once/runtime/outbox/routes';
import { IntrinsicResolver } from '@exactly-once/tools/local-runtime/template/intrinsics';
import type { CfnTemplate } from '@exactly-once/tools/local-runtime/template/model';

/**
 * Plain lookups over a synthesized template, for infra tests that follow
 * references (method -> function -> role -> policies) instead of hard-coding
 * logical ids, so they keep working as functions and routes are added.
 */
export interface CfnResource {
  Type: string;
  Properties?: Record<string, unknown>;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
}

export interface PolicyStatement {
  Effect: string;
  Action: string[];
  Resource: unknown[];
}

type Resources = Record<string, CfnResource>;

function resourcesOf(template: Template): Resources {
  return (template.toJSON() as { Resources: Resources }).Resources;
}

/** [logicalId, resource] for every resource of a type. */
export function resourcesOfType(template: Template, type: string): [string, CfnResource][] {
  return Object.entries(resourcesOf(template)).filter(([, r]) => r.Type === type);
}

/** Logical ids of the functions whose environment carries a fault-injection variable (`FAULT_...`). */
export function functionsWithFaultVariables(template: Template): string[] {
  return resourcesOfType(template, 'AWS::Lambda::Function')
    .filter(([, fn]) => JSON.stringify(fn.Properties?.Environment ?? {}).includes('FAULT_'))
    .map(([id]) => id);
}

function props(resource: CfnResource): Record<string, unknown> {
  return resource.Properties ?? {};
}

/** The logical id in `{ Ref: id }` or `{ 'Fn::GetAtt': [id, ...] }`, else undefined. */
export function referencedId(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const v = value as { Ref?: unknown; 'Fn::GetAtt'?: unknown };
  if (typeof v.Ref === 'string') return v.Ref;
  if (Array.isArray(v['Fn::GetAtt']) && typeof v['Fn::GetAtt'][0] === 'string') return v['Fn::GetAtt'][0];
  return undefined;
}

/** Every logical id referenced anywhere inside a value. */
export function referencedIds(value: unknown): string[] {
  const direct = referencedId(value);
  if (direct !== undefined) return [direct];
  if (Array.isArray(value)) return value.flatMap(referencedIds);
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(referencedIds);
  return [];
}

export interface ApiMethod {
  logicalId: string;
  /** e.g. `POST /orders/{orderId}/cancel` */
  route: string;
  properties: Record<string, unknown>;
  /** Logical id of the Lambda function behind a proxy integration, if any. */
  functionId?: string;
}

/** Every API Gateway method with its route rebuilt from the resource tree. */
export function apiMethods(template: Template): ApiMethod[] {
  const resources = resourcesOf(template);
  const pathOf = (resourceRef: unknown): string => {
    const id = referencedId(resourceRef);
    const resource = id === undefined ? undefined : resources[id];
    // The root resource is referenced as GetAtt RestApi.RootResourceId.
    if (resource === undefined || resource.Type !== 'AWS::ApiGateway::Resource') return '';
    return `${pathOf(props(resource).ParentId)}/${String(props(resource).PathPart)}`;
  };
  return resourcesOfType(template, 'AWS::ApiGateway::Method').map(([logicalId, method]) => {
    const p = props(method);
    const integration = p.Integration as { Uri?: unknown } | undefined;
    const functionId = referencedIds(integration?.Uri).find((id) => resources[id]?.Type === 'AWS::Lambda::Function');
    return { logicalId, route: `${String(p.HttpMethod)} ${pathOf(p.ResourceId) || '/'}`, properties: p, functionId };
  });
}

export function methodAt(template: Template, route: string): ApiMethod {
  const method = apiMethods(template).find((m) => m.route === route);
  if (method === undefined) throw new Error(`No API method ${route}`);
  return method;
}

export function resourceById(template: Template, logicalId: string): CfnResource {
  const resource = resourcesOf(template)[logicalId];
  if (resource === undefined) throw new Error(`No resource ${logicalId}`);
  return resource;
}

/** The logical id of the execution role a function uses. */
export function roleOfFunction(template: Template, functionId: string): string {
  const role = referencedId(props(resourceById(template, functionId)).Role);
  if (role === undefined) throw new Error(`Function ${functionId} has no role reference`);
  return role;
}

function normalise(statement: Record<string, unknown>): PolicyStatement {
  const list = (v: unknown) => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
  return {
    Effect: String(statement.Effect),
    Action: list(statement.Action).map(String),
    Resource: list(statement.Resource),
  };
}

/**
 * Every statement granted to a role: its inline policies, the AWS::IAM::Policy
 * and AWS::IAM::ManagedPolicy resources attached to it. AWS-managed policy ARNs
 * are returned separately by managedPolicyArnsOfRole.
 */
export function statementsOfRole(template: Template, roleId: string): PolicyStatement[] {
  const statements: PolicyStatement[] = [];
  const role = props(resourceById(template, roleId));
  for (const policy of (role.Policies as { PolicyDocument: { Statement: Record<string, unknown>[] } }[] | undefined) ??
    []) {
    statements.push(...policy.PolicyDocument.Statement.map(normalise));
  }
  for (const type of ['AWS::IAM::Policy', 'AWS::IAM::ManagedPolicy']) {
    for (const [, policy] of resourcesOfType(template, type)) {
      const p = props(policy);
      if (!referencedIds(p.Roles).includes(roleId)) continue;
      const document = p.PolicyDocument as { Statement: Record<string, unknown>[] };
      statements.push(...document.Statement.map(normalise));
    }
  }
  return statements;
}

export function managedPolicyArnsOfRole(template: Template, roleId: string): string[] {
  const arns = (props(resourceById(template, roleId)).ManagedPolicyArns as unknown[] | undefined) ?? [];
  return arns.map((arn) => JSON.stringify(arn));
}

/**
 * A readable name for a statement resource: `Orders` for the Orders table ARN,
 * `Orders/index/pendingOutbox` for an index, `*` for everything, else JSON.
 * `tableNames` maps table logical ids to short names.
 */
export function describeResource(resource: unknown, tableNames: Record<string, string>): string {
  if (resource === '*') return '*';
  const direct = referencedId(resource);
  if (direct !== undefined && tableNames[direct] !== undefined) {
    const attribute = (resource as { 'Fn::GetAtt'?: string[] })['Fn::GetAtt']?.[1];
    return attribute === 'StreamArn' ? `${tableNames[direct]}(stream)` : tableNames[direct];
  }
  const join = (resource as { 'Fn::Join'?: [string, unknown[]] } | null)?.['Fn::Join'];
  if (join !== undefined) {
    return join[1].map((part) => (typeof part === 'string' ? part : describeResource(part, tableNames))).join(join[0]);
  }
  return JSON.stringify(resource);
}

/** DynamoDB actions a role is allowed, grouped by readable resource name, sorted. */
export function dynamoDbGrants(
  template: Template,
  roleId: string,
  tableNames: Record<string, string>,
): Record<string, string[]> {
  const grants: Record<string, Set<string>> = {};
  for (const statement of statementsOfRole(template, roleId)) {
    if (statement.Effect !== 'Allow') continue;
    const actions = statement.Action.filter((a) => a.startsWith('dynamodb:') || a === '*');
    if (actions.length === 0) continue;
    for (const resource of statement.Resource) {
      const name = describeResource(resource, tableNames);
      grants[name] ??= new Set();
      for (const action of actions) grants[name].add(action);
    }
  }
  return Object.fromEntries(Object.entries(grants).map(([name, set]) => [name, [...set].sort()]));
}

/** Short names of the stack's tables by logical id: the id of the construct that owns each CfnTable (`Orders`, ...). */
export function tableNamesOf(stack: Stack): Record<string, string> {
  const names: Record<string, string> = {};
  for (const construct of stack.node.findAll()) {
    if (construct instanceof CfnTable)
      names[stack.getLogicalId(construct)] = construct.node.scope?.node.id ?? construct.node.id;
  }
  return names;
}

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
