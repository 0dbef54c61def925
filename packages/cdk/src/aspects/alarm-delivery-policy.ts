/**
 * Whether CloudWatch could deliver an alarm's notification to an SNS topic,
 * judged from CloudFormation JSON alone (intrinsics unresolved): the topic
 * policy must let the CloudWatch service principal `sns:Publish` on behalf of
 * that alarm, nothing may deny it, and a topic encrypted with a customer key
 * needs a key policy that lets CloudWatch `kms:Decrypt` and `kms:GenerateDataKey*`.
 *
 * Pure on purpose (no CDK import): the AlarmDelivery aspect judges the
 * synthesized stack with it, and the local runtime judges the template it runs
 * with it, so the two cannot disagree.
 *
 * Values are compared as spellings: `{ Ref: 'Topic' }` is `${Topic}`,
 * `{ 'Fn::GetAtt': ['Alarm', 'Arn'] }` is `${Alarm.Arn}`, a pseudo parameter is
 * its value when known, else `${AWS::AccountId}`. The request CloudWatch makes
 * is spelled the same way, so a condition matches when it names the same
 * things. An Allow counts only when it surely applies; a Deny counts when it
 * may apply (a condition this cannot judge), so a "deliverable" is never a guess.
 */

import { isRecord, referencedLogicalId, type ResourceLookup, type TemplateResource } from '../template';

export interface DeliveryEnvironment {
  /** Values of pseudo parameters by name without `AWS::` (AccountId, Region, Partition); unknown ones stay symbolic. */
  readonly pseudo?: Readonly<Record<string, string>>;
  /** Other spellings of this account's id (a stack's literal account). */
  readonly accounts?: readonly string[];
}

export type ActionDelivery =
  /** CloudWatch may publish to the topic, a topic of this template (logical id). */
  | { readonly kind: 'deliverable'; readonly topic: string }
  /** CloudWatch could not publish, and why (one reason per obstacle). */
  | { readonly kind: 'blocked'; readonly topic: string; readonly reasons: string[] }
  /** The action's topic or key is not in this template, or cannot be told. */
  | { readonly kind: 'unverifiable'; readonly reason: string }
  /** Not an SNS action (Auto Scaling, EC2, Systems Manager, Lambda...): nothing to check. */
  | { readonly kind: 'not-sns' };

export const CLOUDWATCH_PRINCIPAL = 'cloudwatch.amazonaws.com';
export const ALARM_ACTION_PROPERTIES = ['AlarmActions', 'OKActions', 'InsufficientDataActions'] as const;

/** The AWS-managed SNS key: its policy is AWS's and does not let CloudWatch use it. */
const AWS_MANAGED_SNS_KEY = /(^|[:/])alias\/aws\/sns$/;

/** Every distinct action of an alarm (alarm, OK and insufficient-data actions together). */
export function alarmActions(alarm: TemplateResource): unknown[] {
  const seen = new Map<string, unknown>();
  for (const property of ALARM_ACTION_PROPERTIES) {
    const actions = alarm.Properties?.[property];
    if (!Array.isArray(actions)) continue;
    for (const action of actions) seen.set(JSON.stringify(action), action);
  }
  return [...seen.values()];
}

/** Whether CloudWatch could deliver the notification of alarm `alarmId` to `action`. */
export function alarmActionDelivery(
  lookup: ResourceLookup,
  alarmId: string,
  action: unknown,
  env: DeliveryEnvironment = {},
): ActionDelivery {
  const topicId = referencedLogicalId(action);
  const target = topicId === undefined ? undefined : lookup.get(topicId);
  if (topicId !== undefined && target?.Type === 'AWS::SNS::Topic') {
    return topicDelivery(lookup, alarmId, topicId, env);
  }
  const arn = spell(action, env);
  const service = arn === undefined ? undefined : /^arn:[^:]*:([^:]+):/.exec(arn)?.[1];
  if (service !== undefined && service !== 'sns') return { kind: 'not-sns' };
  return {
    kind: 'unverifiable',
    reason: `its action ${arn ?? JSON.stringify(action)} is not an SNS topic of this template, so its policy cannot be read`,
  };
}

function topicDelivery(
  lookup: ResourceLookup,
  alarmId: string,
  topicId: string,
  env: DeliveryEnvironment,
): ActionDelivery {
  const alarm = lookup.get(alarmId);
  const topic = lookup.get(topicId);
  const accounts = unique([spell({ Ref: 'AWS::AccountId' }, env)!, ...(env.accounts ?? [])]);
  const alarmName = spell(alarm?.Properties?.AlarmName, env) ?? `\${${alarmId}}`;
  const partition = spell({ Ref: 'AWS::Partition' }, env)!;
  const region = spell({ Ref: 'AWS::Region' }, env)!;
  const alarmArns = [
    `\${${alarmId}.Arn}`,
    ...accounts.map((account) => `arn:${partition}:cloudwatch:${region}:${account}:alarm:${alarmName}`),
  ];
  // What CloudWatch's request looks like to a resource policy.
  const context: Record<string, string[]> = {
    'aws:sourceaccount': accounts,
    'aws:sourceowner': accounts,
    'aws:sourcearn': alarmArns,
    'aws:securetransport': ['true'],
    'aws:principalservicename': [CLOUDWATCH_PRINCIPAL],
  };
  const topicName = lookup.name(topicId);
  // For messages: the alarm's own name, else its readable path (CloudFormation will generate the name).
  const alarmLabel = spell(alarm?.Properties?.AlarmName, env) ?? lookup.name(alarmId);
  const reasons: string[] = [];

  const policies = topicPolicies(lookup, topicId);
  if (policies.length > 1) {
    return {
      kind: 'unverifiable',
      reason: `topic ${topicName} has ${policies.length} topic policies (${policies.map((p) => lookup.name(p.id)).join(', ')}); each replaces the others, so which one holds cannot be told`,
    };
  }
  // No policy of its own: SNS's default policy lets this account's services publish.
  if (policies.length === 1) {
    const [{ id, document }] = policies;
    const request = { action: 'sns:Publish', resources: [`\${${topicId}}`, `\${${topicId}.TopicArn}`], context };
    reasons.push(...policyObstacles(document, request, `topic policy ${lookup.name(id)}`, alarmLabel, env));
  }

  const keyReason = keyObstacles(lookup, topic?.Properties?.KmsMasterKeyId, context, alarmLabel, env);
  if (!Array.isArray(keyReason)) return keyReason;
  reasons.push(...keyReason);

  return reasons.length === 0 ? { kind: 'deliverable', topic: topicId } : { kind: 'blocked', topic: topicId, reasons };
}

function topicPolicies(lookup: ResourceLookup, topicId: string): { id: string; document: unknown }[] {
  const found: { id: string; document: unknown }[] = [];
  for (const [id, policy] of lookup.ofType('AWS::SNS::TopicPolicy')) {
    const topics = policy.Properties?.Topics;
    if (Array.isArray(topics) && topics.some((t) => referencedLogicalId(t) === topicId)) {
      found.push({ id, document: policy.Properties?.PolicyDocument });
    }
  }
  for (const [id, policy] of lookup.ofType('AWS::SNS::TopicInlinePolicy')) {
    if (referencedLogicalId(policy.Properties?.TopicArn) === topicId)
      found.push({ id, document: policy.Properties?.PolicyDocument });
  }
  return found;
}

function keyObstacles(
  lookup: ResourceLookup,
  keyRef: unknown,
  context: Record<string, string[]>,
  alarmName: string,
  env: DeliveryEnvironment,
): string[] | ActionDelivery {
  if (keyRef === undefined) return [];
  const keyId = referencedLogicalId(keyRef);
  const key = keyId === undefined ? undefined : lookup.get(keyId);
  if (keyId !== undefined && key?.Type === 'AWS::KMS::Key') {
    const where = `key policy of ${lookup.name(keyId)}`;
    const resources = [`\${${keyId}.Arn}`, `\${${keyId}}`];
    // CloudWatch makes a data key to encrypt the message, and SNS decrypts it to deliver.
    return ['kms:Decrypt', 'kms:GenerateDataKey'].flatMap((action) =>
      policyObstacles(key.Properties?.KeyPolicy, { action, resources, context }, where, alarmName, env),
    );
  }
  const spelled = spell(keyRef, env);
  if (spelled !== undefined && AWS_MANAGED_SNS_KEY.test(spelled)) {
    return [
      `the topic is encrypted with the AWS-managed key alias/aws/sns, whose policy does not let ${CLOUDWATCH_PRINCIPAL} use it; use a customer-managed key`,
    ];
  }
  return {
    kind: 'unverifiable',
    reason: `its topic's key ${spelled ?? JSON.stringify(keyRef)} is not a key of this template, so its policy cannot be read`,
  };
}

interface Request {
  action: string;
  resources: string[];
  /** Condition keys (lower case) → the spellings of their one value. */
  context: Record<string, string[]>;
}

type Verdict = 'yes' | 'no' | 'unknown';

/** Why `document` would not let CloudWatch make `request` (empty when it would). */
function policyObstacles(
  document: unknown,
  request: Request,
  where: string,
  alarmName: string,
  env: DeliveryEnvironment,
): string[] {
  const statements = asArray(isRecord(document) ? document.Statement : undefined).filter(isRecord);
  const obstacles: string[] = [];
  let allowed = false;
  statements.forEach((statement, index) => {
    const verdict = applies(statement, request, env);
    const label = typeof statement.Sid === 'string' ? `statement ${statement.Sid}` : `statement #${index + 1}`;
    if (statement.Effect === 'Deny' && verdict !== 'no') {
      obstacles.push(
        `${label} of the ${where} ${verdict === 'yes' ? 'denies' : 'may deny (a condition that cannot be judged here)'} ${CLOUDWATCH_PRINCIPAL} ${request.action}`,
      );
    }
    if (statement.Effect === 'Allow' && verdict === 'yes') allowed = true;
  });
  if (!allowed) {
    obstacles.push(
      `no statement of the ${where} allows ${CLOUDWATCH_PRINCIPAL} ${request.action}${request.action.startsWith('kms:GenerateDataKey') ? '*' : ''} ` +
        `for alarm ${alarmName} of this account (check Principal, Action, Resource and the aws:SourceAccount / aws:SourceArn conditions)`,
    );
  }
  return obstacles;
}

function applies(statement: Record<string, unknown>, request: Request, env: DeliveryEnvironment): Verdict {
  const verdicts: Verdict[] = [
    principalMatches(statement),
    listMatches(statement.Action, statement.NotAction, [request.action], env, true),
    'Resource' in statement || 'NotResource' in statement
      ? listMatches(statement.Resource, statement.NotResource, request.resources, env, false)
      : 'yes',
    conditionsHold(statement.Condition, request.context, env),
  ];
  if (verdicts.includes('no')) return 'no';
  return verdicts.includes('unknown') ? 'unknown' : 'yes';
}

function principalMatches(statement: Record<string, unknown>): Verdict {
  const names = (principal: unknown): boolean => {
    if (principal === '*') return true;
    if (!isRecord(principal)) return false;
    if (asArray(principal.AWS).includes('*')) return true;
    return asArray(principal.Service).some((s) => typeof s === 'string' && s.toLowerCase() === CLOUDWATCH_PRINCIPAL);
  };
  if ('Principal' in statement) return names(statement.Principal) ? 'yes' : 'no';
  if ('NotPrincipal' in statement) return names(statement.NotPrincipal) ? 'no' : 'yes';
  return 'no';
}

/** Action/NotAction or Resource/NotResource against the request's (spellings of one) value. */
function listMatches(
  positive: unknown,
  negative: unknown,
  values: string[],
  env: DeliveryEnvironment,
  ignoreCase: boolean,
): Verdict {
  const list = positive !== undefined ? positive : negative;
  const patterns = asArray(list).map((p) => spell(p, env));
  const hit = patterns.some((p) => p !== undefined && values.some((v) => glob(p, v, ignoreCase)));
  const unknown = !hit && patterns.includes(undefined);
  const verdict: Verdict = hit ? 'yes' : unknown ? 'unknown' : 'no';
  if (positive !== undefined) return verdict;
  return verdict === 'yes' ? 'no' : verdict === 'no' ? 'yes' : 'unknown';
}

function conditionsHold(condition: unknown, context: Record<string, string[]>, env: DeliveryEnvironment): Verdict {
  if (condition === undefined) return 'yes';
  if (!isRecord(condition)) return 'unknown';
  const verdicts: Verdict[] = [];
  for (const [rawOperator, block] of Object.entries(condition)) {
    if (!isRecord(block)) {
      verdicts.push('unknown');
      continue;
    }
    for (const [key, expected] of Object.entries(block)) {
      verdicts.push(conditionHolds(rawOperator, context[key.toLowerCase()], asArray(expected), env));
    }
  }
  if (verdicts.includes('no')) return 'no';
  return verdicts.includes('unknown') ? 'unknown' : 'yes';
}

function conditionHolds(
  rawOperator: string,
  actual: string[] | undefined,
  expectedValues: unknown[],
  env: DeliveryEnvironment,
): Verdict {
  // The keys CloudWatch sends hold one value each: the set operators reduce to the plain ones.
  const withoutSet = rawOperator.replace(/^For(AnyValue|AllValues):/, '');
  const ifExists = withoutSet.endsWith('IfExists');
  const operator = ifExists ? withoutSet.slice(0, -'IfExists'.length) : withoutSet;
  const expected = expectedValues.map((v) => spell(v, env));

  if (operator === 'Null') {
    const wantsAbsent = expected[0]?.toLowerCase() === 'true';
    return (actual === undefined) === wantsAbsent ? 'yes' : 'no';
  }
  const match = MATCHERS[operator.replace(/^(String|Arn)Not/, '$1')];
  if (match === undefined) return 'unknown';
  const negated = /^(String|Arn)Not/.test(operator);
  // A key the request does not carry: IfExists holds, a negated operator holds, any other fails (IAM's rules).
  if (actual === undefined) return ifExists || negated ? 'yes' : 'no';
  const hit = expected.some((e) => e !== undefined && actual.some((a) => match(e, a)));
  if (!hit && expected.includes(undefined)) return 'unknown';
  return hit !== negated ? 'yes' : 'no';
}

const MATCHERS: Record<string, (expected: string, actual: string) => boolean> = {
  StringEquals: (e, a) => e === a,
  StringEqualsIgnoreCase: (e, a) => e.toLowerCase() === a.toLowerCase(),
  StringLike: (e, a) => glob(e, a, false),
  ArnEquals: (e, a) => e === a,
  ArnLike: (e, a) => glob(e, a, false),
  Bool: (e, a) => e.toLowerCase() === a.toLowerCase(),
};

/** IAM wildcards: `*` any run of characters, `?` one character. */
function glob(pattern: string, value: string, ignoreCase: boolean): boolean {
  const source = pattern
    .split('')
    .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[\\^$.|+()[\]{}]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`, ignoreCase ? 'is' : 's').test(value);
}

/**
 * A CloudFormation value as text: literals as they are, `{ Ref: X }` as
 * `${X}`, `Fn::GetAtt` as `${X.Attr}`, pseudo parameters as their value when
 * known, `Fn::Join` and `Fn::Sub` assembled. Undefined when it cannot be spelled.
 */
export function spell(value: unknown, env: DeliveryEnvironment = {}): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (!isRecord(value)) return undefined;
  const pseudo = (name: string): string => env.pseudo?.[name.replace(/^AWS::/, '')] ?? `\${${name}}`;
  if (typeof value.Ref === 'string') return value.Ref.startsWith('AWS::') ? pseudo(value.Ref) : `\${${value.Ref}}`;
  const getAtt = value['Fn::GetAtt'];
  if (Array.isArray(getAtt) && getAtt.every((p) => typeof p === 'string')) return `\${${getAtt.join('.')}}`;
  if (typeof getAtt === 'string') return `\${${getAtt}}`;
  const join = value['Fn::Join'];
  if (Array.isArray(join) && typeof join[0] === 'string' && Array.isArray(join[1])) {
    const parts = join[1].map((p: unknown) => spell(p, env));
    return parts.includes(undefined) ? undefined : parts.join(join[0]);
  }
  const sub = value['Fn::Sub'];
  const [text, variables] = Array.isArray(sub) ? [sub[0], sub[1]] : [sub, undefined];
  if (typeof text === 'string') {
    let failed = false;
    const result = text.replace(/\$\{([^}!]+)\}/g, (whole, name: string) => {
      if (isRecord(variables) && name in variables) {
        const spelled = spell(variables[name], env);
        if (spelled === undefined) failed = true;
        return spelled ?? whole;
      }
      return name.startsWith('AWS::') ? pseudo(name) : whole;
    });
    return failed ? undefined : result;
  }
  return undefined;
}

function asArray(value: unknown): unknown[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
