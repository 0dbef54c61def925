import * as fs from 'node:fs';
import * as path from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { applyCorrectnessAspects } from '@exactly-once/cdk/aspects';
import {
  ADOT_MANAGED_POLICY,
  ADOT_NODEJS_LAYER,
  FunctionWithDefaults,
  lambdaBundling,
  METRICS_NAMESPACE,
  setFunctionBuild,
} from '@exactly-once/cdk/function-defaults';
import {
  PROBE_STACK_CONSUMERS,
  synthProbeStack,
  type ProbeSettings,
  type ProbeStack,
  type ProbeStage,
} from '../exactly-once/fixtures/probe-stack';
import { PROBE_CONSUMERS } from '../exactly-once/fixtures/probe-spec';
import { cdkContext } from '../support/cdk-app';
import { functionsWithFaultVariables, resourcesOfType, type CfnResource } from '../support/template';

/**
 * Stages: each stage is a stack of its own, named for it, with the stage's
 * safety settings, which reach every resource ExactlyOnce and the application
 * make; two stages deploy side by side in one account. Built on the probe stack
 * (the mechanism with its neutral fixture) from each stage's settings; how the
 * application's configuration reads a stage from context: stage-config.test.ts.
 */

interface StageSynth {
  stack: ProbeStack;
  template: Template;
  json: { Resources: Record<string, CfnResource>; Outputs?: Record<string, { Export?: { Name: unknown } }> };
}

/** A stage's stack, named for the stage as an application names it (`Probe-<stage>`). */
function synthStage(stage: ProbeStage, settings: Partial<ProbeSettings> = {}): StageSynth {
  const { stack, template } = synthProbeStack({ stage, settings, stackName: `Probe-${stage}` });
  return { stack, template, json: template.toJSON() as StageSynth['json'] };
}

/**
 * The stack's dead-letter queues: every queue another queue's redrive policy, an event source mapping's
 * on-failure destination or a function's dead-letter config points at.
 */
function deadLetterQueues(template: Template): [string, CfnResource][] {
  const json = JSON.stringify(template.toJSON().Resources);
  return resourcesOfType(template, 'AWS::SQS::Queue').filter(([id]) =>
    new RegExp(`"(deadLetterTargetArn|Destination|TargetArn)":\\{"Fn::GetAtt":\\["${id}","Arn"\\]`).test(json),
  );
}

let dev: StageSynth;
let prod: StageSynth;

beforeAll(() => {
  dev = synthStage('dev');
  prod = synthStage('prod');
});

describe('prod', () => {
  test('every table is retained and refuses deletion', () => {
    const tables = resourcesOfType(prod.template, 'AWS::DynamoDB::Table');

    expect(tables).toHaveLength(4);
    for (const [id, table] of tables) {
      expect({
        id,
        deletion: table.DeletionPolicy,
        replace: table.UpdateReplacePolicy,
        protection: table.Properties?.DeletionProtectionEnabled,
      }).toEqual({ id, deletion: 'Retain', replace: 'Retain', protection: true });
    }
  });

  test("every DLQ (each consumer's, the relay's on-failure queue, the sweeper's) is retained when the stack goes: its events wait for a person", () => {
    const dlqs = deadLetterQueues(prod.template);

    expect(dlqs).toHaveLength(PROBE_STACK_CONSUMERS.length + 2);
    for (const [id, queue] of dlqs)
      expect({ id, deletion: queue.DeletionPolicy, replace: queue.UpdateReplacePolicy }).toEqual({
        id,
        deletion: 'Retain',
        replace: 'Retain',
      });
  });

  test('has no fault switch: no SSM parameter, no fault variable on any function, no output', () => {
    expect(resourcesOfType(prod.template, 'AWS::SSM::Parameter')).toEqual([]);
    expect(functionsWithFaultVariables(prod.template)).toEqual([]);
    expect(Object.keys(prod.json.Outputs ?? {})).not.toContain('FaultParameterName');
  });

  test('keeps every log group a year', () => {
    const retention = resourcesOfType(prod.template, 'AWS::Logs::LogGroup').map(([id, g]) => [
      id,
      g.Properties?.RetentionInDays,
    ]);

    // One per function (the relay, the sweeper, each consumer, the API's producer) and the API's access logs.
    expect(retention.length).toBeGreaterThanOrEqual(PROBE_STACK_CONSUMERS.length + 4);
    expect(retention).toEqual(retention.map(([id]) => [id, 365]));
  });

  test('warns at synth when no alarm e-mail is given, and not when one is', () => {
    const withEmail = synthStage('prod', { alarmEmail: 'ops@example.com' });

    Annotations.fromStack(prod.stack).hasWarning('*', Match.stringLikeRegexp('stage=prod without -c alarmEmail'));
    expect(Annotations.fromStack(withEmail.stack).findWarning('*', Match.stringLikeRegexp('alarmEmail'))).toEqual([]);
    withEmail.template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'ops@example.com',
    });
  });
});

describe('dev keeps the demo behaviour', () => {
  test('tables are deleted with the stack and are not deletion-protected', () => {
    for (const [id, table] of resourcesOfType(dev.template, 'AWS::DynamoDB::Table')) {
      expect({ id, deletion: table.DeletionPolicy, protection: table.Properties?.DeletionProtectionEnabled }).toEqual({
        id,
        deletion: 'Delete',
        protection: false,
      });
    }
  });

  test('its DLQs are deleted with the stack, as its tables are', () => {
    const dlqs = deadLetterQueues(dev.template);

    expect(dlqs).toHaveLength(PROBE_STACK_CONSUMERS.length + 2);
    for (const [id, queue] of dlqs) expect({ id, deletion: queue.DeletionPolicy }).toEqual({ id, deletion: 'Delete' });
  });

  test('keeps logs a month (fault injection is opt-in: test/infra/fault-injection.test.ts)', () => {
    for (const [id, group] of resourcesOfType(dev.template, 'AWS::Logs::LogGroup')) {
      expect({ id, days: group.Properties?.RetentionInDays }).toEqual({ id, days: 30 });
    }
  });
});

describe('on-demand throughput ceiling', () => {
  /** Each table's and each index's OnDemandThroughput, by logical id (and index name). */
  const ceilings = (synth: StageSynth) =>
    resourcesOfType(synth.template, 'AWS::DynamoDB::Table').flatMap(([id, table]) => [
      [id, table.Properties?.OnDemandThroughput],
      ...(
        (table.Properties?.GlobalSecondaryIndexes ?? []) as { IndexName: string; OnDemandThroughput?: unknown }[]
      ).map((index) => [`${id}/${index.IndexName}`, index.OnDemandThroughput]),
    ]);

  test('dev: every table and index is capped at 4,000 read and 4,000 write units a second, so a runaway load test is throttled', () => {
    const found = ceilings(dev);

    expect(found.length).toBeGreaterThanOrEqual(5);
    for (const [id, ceiling] of found)
      expect({ id, ceiling }).toEqual({ id, ceiling: { MaxReadRequestUnits: 4000, MaxWriteRequestUnits: 4000 } });
  });

  test('prod: no ceiling unless asked; asked, the number given; dev can drop it with none', () => {
    const asked = synthStage('prod', { tableThroughputCeiling: 500 });
    const dropped = synthStage('dev', { tableThroughputCeiling: undefined });

    for (const [id, ceiling] of [...ceilings(prod), ...ceilings(dropped)])
      expect({ id, ceiling }).toEqual({ id, ceiling: undefined });
    for (const [id, ceiling] of ceilings(asked))
      expect({ id, ceiling }).toEqual({ id, ceiling: { MaxReadRequestUnits: 500, MaxWriteRequestUnits: 500 } });
  });
});

describe('dev and prod deploy side by side in one account', () => {
  /** Properties that name a resource account- or region-wide, by resource type. */
  const PHYSICAL_NAMES: Record<string, string> = {
    'AWS::DynamoDB::Table': 'TableName',
    'AWS::SQS::Queue': 'QueueName',
    'AWS::SNS::Topic': 'TopicName',
    'AWS::Lambda::Function': 'FunctionName',
    'AWS::IAM::Role': 'RoleName',
    'AWS::IAM::ManagedPolicy': 'ManagedPolicyName',
    'AWS::Logs::LogGroup': 'LogGroupName',
    'AWS::CloudWatch::Alarm': 'AlarmName',
    'AWS::CloudWatch::Dashboard': 'DashboardName',
    'AWS::SSM::Parameter': 'Name',
    'AWS::KMS::Alias': 'AliasName',
    'AWS::Events::Rule': 'Name',
    'AWS::ApiGateway::RestApi': 'Name',
  };

  /** Every explicit physical name and export name, as `type: name`. CloudFormation generates the rest. */
  function explicitNames(synth: StageSynth): string[] {
    const names = Object.values(synth.json.Resources).flatMap((r) => {
      const key = PHYSICAL_NAMES[r.Type];
      const name = key === undefined ? undefined : r.Properties?.[key];
      return name === undefined ? [] : [`${r.Type}: ${JSON.stringify(name)}`];
    });
    const exports = Object.values(synth.json.Outputs ?? {}).flatMap((o) =>
      o.Export ? [`Export: ${JSON.stringify(o.Export.Name)}`] : [],
    );
    return [...names, ...exports];
  }

  test('no explicit name is shared', () => {
    const devNames = explicitNames(dev);
    const prodNames = explicitNames(prod);

    expect(devNames.length).toBeGreaterThan(0); // the REST API is named, at least
    expect(devNames.filter((name) => prodNames.includes(name))).toEqual([]);
  });

  test("the API 5xx alarm watches its own stage's API", () => {
    const apiAlarmDimensions = (synth: StageSynth) => {
      const alarms = resourcesOfType(synth.template, 'AWS::CloudWatch::Alarm').filter(
        ([, a]) => a.Properties?.MetricName === '5XXError',
      );
      expect(alarms).toHaveLength(1);
      return alarms[0][1].Properties?.Dimensions;
    };

    expect(apiAlarmDimensions(dev)).toEqual([{ Name: 'ApiName', Value: 'Probe-dev' }]);
    expect(apiAlarmDimensions(prod)).toEqual([{ Name: 'ApiName', Value: 'Probe-prod' }]);
    prod.template.hasResourceProperties('AWS::ApiGateway::RestApi', { Name: 'Probe-prod' });
  });

  test("no alarm watches a custom metric the other stage publishes (the functions' service dimension is their stack's)", () => {
    /** Each alarm's metrics in the stack's own namespace, as `namespace metric dimensions`. */
    const customAlarmMetrics = (synth: StageSynth): string[] =>
      resourcesOfType(synth.template, 'AWS::CloudWatch::Alarm').flatMap(([, alarm]) => {
        const props = alarm.Properties ?? {};
        const stats = (props.Metrics as { MetricStat?: { Metric: Record<string, unknown> } }[] | undefined)
          ?.map((m) => m.MetricStat?.Metric)
          .filter((m) => m !== undefined) ?? [props];
        return stats
          .filter((m) => m.Namespace === METRICS_NAMESPACE)
          .map((m) => `${m.Namespace} ${m.MetricName} ${JSON.stringify(m.Dimensions)}`);
      });
    const devMetrics = customAlarmMetrics(dev);
    const prodMetrics = customAlarmMetrics(prod);
    const devServiceNames = resourcesOfType(dev.template, 'AWS::Lambda::Function').map(
      ([, f]) => (f.Properties?.Environment as { Variables: Record<string, string> }).Variables.POWERTOOLS_SERVICE_NAME,
    );

    expect(prodMetrics.length).toBeGreaterThan(0); // the outbox age and malformed-item alarms, at least
    expect(prodMetrics.filter((m) => devMetrics.includes(m))).toEqual([]);
    expect(new Set(devServiceNames)).toEqual(new Set(['Probe-dev']));
  });
});

describe('the account-wide API Gateway logging role', () => {
  test('by default the stack creates it, and destroying the stack keeps it (other stages log through it)', () => {
    const accounts = resourcesOfType(dev.template, 'AWS::ApiGateway::Account');
    expect(accounts).toHaveLength(1);
    const [, account] = accounts[0];
    const roleId = (account.Properties?.CloudWatchRoleArn as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0];

    expect(account.DeletionPolicy).toBe('Retain');
    expect(dev.json.Resources[roleId]).toMatchObject({ Type: 'AWS::IAM::Role', DeletionPolicy: 'Retain' });
  });

  test('with apiGatewayAccountRole=existing the stack neither creates nor changes it', () => {
    const { template } = synthStage('dev', { apiGatewayAccountRole: 'existing' });
    const apiGatewayRoles = resourcesOfType(template, 'AWS::IAM::Role').filter(([, r]) =>
      JSON.stringify(r.Properties?.AssumeRolePolicyDocument).includes('apigateway.amazonaws.com'),
    );

    expect(resourcesOfType(template, 'AWS::ApiGateway::Account')).toEqual([]);
    expect(apiGatewayRoles).toEqual([]);
  });
});

describe('reserved concurrency', () => {
  test('no function of the stack reserves concurrency (a fresh account could not deploy it)', () => {
    const reserving = resourcesOfType(dev.template, 'AWS::Lambda::Function').filter(
      ([, fn]) => fn.Properties?.ReservedConcurrentExecutions !== undefined,
    );

    expect(reserving.map(([id]) => id)).toEqual([]);
  });

  /** A stack with the correctness aspects and one function reserving concurrency; returns the synth error, if any. */
  function synthReservingFunction(
    context: Record<string, unknown>,
    how: 'prop' | 'override' = 'prop',
  ): string | undefined {
    const app = new App({ context: cdkContext(context) });
    const stack = new Stack(app, 'Reserving');
    const fn = new lambda.Function(stack, 'Reserving', {
      runtime: lambda.Runtime.NODEJS_24_X,
      handler: 'index.handler',
      code: lambda.Code.fromInline('exports.handler = async () => {};'),
      reservedConcurrentExecutions: how === 'prop' ? 1 : undefined,
    });
    if (how === 'override') {
      (fn.node.defaultChild as lambda.CfnFunction).addPropertyOverride('ReservedConcurrentExecutions', 1);
    }
    applyCorrectnessAspects(stack);
    try {
      app.synth();
      return undefined;
    } catch (error) {
      return (error as Error).message;
    }
  }

  test('synth refuses a function that reserves concurrency, naming it and the option', () => {
    const error = synthReservingFunction({});

    expect(error).toMatch(/\[Correctness\/ReservedConcurrency\] Reserving\/Reserving\/Resource reserves concurrency/);
    expect(error).toMatch(/-c allowReservedConcurrency=true/);
  });

  test('an escape-hatch override that reserves concurrency is refused too', () => {
    expect(synthReservingFunction({}, 'override')).toMatch(
      /\[Correctness\/ReservedConcurrency\] Reserving\/Reserving\/Resource reserves concurrency/,
    );
  });

  test('-c allowReservedConcurrency=true lets it through', () => {
    expect(synthReservingFunction({ allowReservedConcurrency: 'true' })).toBeUndefined();
  });
});

describe('OpenTelemetry through the ADOT layer: a stage option, off by default', () => {
  const functions = (synth: StageSynth) => resourcesOfType(synth.template, 'AWS::Lambda::Function');
  const wrapperOf = (fn: CfnResource) =>
    (fn.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables
      ?.AWS_LAMBDA_EXEC_WRAPPER;
  /** What ADOT changes on a function: its layers and its exec wrapper. */
  const adotOf = ([id, fn]: [string, CfnResource]) => ({ id, layers: fn.Properties?.Layers, wrapper: wrapperOf(fn) });
  /** The AWS managed policies on the role of each function. */
  const managedPoliciesOf = (synth: StageSynth) =>
    functions(synth).map(([, fn]) => {
      const roleId = (fn.Properties?.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
      return JSON.stringify(synth.json.Resources[roleId].Properties?.ManagedPolicyArns ?? []);
    });
  const POLICY = `:iam::aws:policy/${ADOT_MANAGED_POLICY}`;

  test('off (dev and prod by default): no function has the layer, the wrapper or the policy', () => {
    for (const synth of [dev, prod]) {
      for (const entry of functions(synth))
        expect(adotOf(entry)).toEqual({ id: entry[0], layers: undefined, wrapper: undefined });
      for (const policies of managedPoliciesOf(synth)) expect(policies).not.toContain(POLICY);
    }
  });

  test("on: every function has AWS's optimized Node.js layer of the stack's Region, its otel-instrument wrapper and its role policy", () => {
    const on = synthStage('dev', { openTelemetry: true });
    const all = functions(on);
    const mappings = (on.template.toJSON() as { Mappings?: Record<string, Record<string, { arn: string }>> }).Mappings;

    // The relay, the sweeper, one per consumer, and the API's producer.
    expect(all.length).toBeGreaterThanOrEqual(PROBE_STACK_CONSUMERS.length + 3);
    // The probe stack names no Region: the ARN is looked up at deploy time, in one mapping of every Region.
    expect(Object.keys(mappings ?? {})).toEqual(['AdotNodejsLayerArns']);
    const table = mappings!.AdotNodejsLayerArns;
    expect(Object.keys(table).sort()).toEqual(Object.keys(ADOT_NODEJS_LAYER.regions).sort());
    expect(table['eu-west-1'].arn).toBe('arn:aws:lambda:eu-west-1:615299751070:layer:AWSOpenTelemetryDistroJs:13');
    const lookup = { 'Fn::FindInMap': ['AdotNodejsLayerArns', { Ref: 'AWS::Region' }, 'arn'] };
    for (const entry of all)
      expect(adotOf(entry)).toEqual({ id: entry[0], layers: [lookup], wrapper: '/opt/otel-instrument' });
    for (const policies of managedPoliciesOf(on)) expect(policies).toContain(POLICY);
  });

  test("a stack that names its Region gets that Region's ARN; a Region the layer is not published in is refused by name", () => {
    const inRegion = (region: string) => {
      const app = new App({ context: cdkContext() });
      const stack = new Stack(app, 'Pinned', { env: { region } });
      setFunctionBuild(stack, { faultInjection: false, inboxBypass: false, openTelemetry: true });
      new FunctionWithDefaults(stack, 'Fn', { entry: PROBE_CONSUMERS[0].entry });
      return Template.fromStack(stack);
    };

    const pinned = inRegion('ap-southeast-5');

    pinned.hasResourceProperties('AWS::Lambda::Function', {
      Layers: ['arn:aws:lambda:ap-southeast-5:152034782359:layer:AWSOpenTelemetryDistroJs:6'],
    });
    expect(Object.keys(pinned.toJSON()).includes('Mappings')).toBe(false);
    expect(() => inRegion('xx-nowhere-1')).toThrow(
      /The ADOT layer AWSOpenTelemetryDistroJs is not published in xx-nowhere-1: openTelemetry=true needs one of af-south-1, /,
    );
  });

  test("the bundles' @opentelemetry/api is of no later a minor version than the layer's (a later one stays a no-op under it)", () => {
    const minor = (version: string) => version.split('.').slice(0, 2).map(Number);
    const packageJson = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    const pinned = packageJson.dependencies['@opentelemetry/api'];
    const [ownMajor, ownMinor] = minor(pinned);
    const [layerMajor, layerMinor] = minor(ADOT_NODEJS_LAYER.openTelemetryApi);

    expect(ownMajor).toBe(layerMajor);
    expect(ownMinor).toBeLessThanOrEqual(layerMinor);
  });

  test("on, the bundles' exports are plain values the wrapper can replace; off, the bundles are as before", () => {
    const build = { faultInjection: false, inboxBypass: false };

    expect(lambdaBundling({ ...build, openTelemetry: true }).footer).toBe('module.exports = { ...module.exports };');
    expect(lambdaBundling(build)).not.toHaveProperty('footer');
  });
});

describe('span sampling reaches every function as its environment', () => {
  const functionEnvironment = (build: Parameters<typeof setFunctionBuild>[1]) => {
    const app = new App({ context: cdkContext() });
    const stack = new Stack(app, 'Sampled');
    setFunctionBuild(stack, build);
    new FunctionWithDefaults(stack, 'Fn', { entry: PROBE_CONSUMERS[0].entry });
    const [fn] = Object.values(Template.fromStack(stack).findResources('AWS::Lambda::Function'));
    return (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
  };

  test('a build with span sampling sets SPAN_SAMPLE_RATE and SLOW_SPAN_MS; a build without sets neither', () => {
    const sampled = functionEnvironment({
      faultInjection: false,
      inboxBypass: false,
      spanSampling: { rate: 0.1, slowMs: 750 },
    });
    const unsampled = functionEnvironment({ faultInjection: false, inboxBypass: false });

    expect(sampled).toMatchObject({ SPAN_SAMPLE_RATE: '0.1', SLOW_SPAN_MS: '750' });
    expect(Object.keys(unsampled)).not.toContain('SPAN_SAMPLE_RATE');
    expect(Object.keys(unsampled)).not.toContain('SLOW_SPAN_MS');
  });
});
