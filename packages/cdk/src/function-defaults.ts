import { CfnMapping, Duration, Lazy, Stack, Token, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct, type IConstruct } from 'constructs';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { defaultLogGroupProps } from './log-group-defaults';
import { ENV } from '@exactly-once/runtime/env-names';
import { SPAN_SAMPLING_ENV, type SpanSampling } from '@exactly-once/runtime/trace/span-sampling';
import { deadLetterQueueProps } from './queue-defaults';
import { PROJECT_DIR } from './project-dir';

/**
 * The Powertools service name, and so the `service` dimension of every custom
 * metric: the stack's name. One name for every stack would let two stages in
 * one account and region publish the same metric, so one stage's alarms (the
 * outbox age, malformed items) would fire on the other's data and the
 * dashboards would add both.
 *
 * @example
 * ```ts
 * new cdk.CfnOutput(this, 'Service', { value: serviceName(this) }); // the stack's name
 * ```
 */
export function serviceName(scope: IConstruct): string {
  return Stack.of(scope).stackName;
}

/**
 * Which optional code the bundles carry ({@link bundleDefines}). Set once per stack with
 * {@link setFunctionBuild} for the application's functions (ExactlyOnce's come from its props); without it, none.
 *
 * @example
 * ```ts
 * const build: FunctionBuild = { faultInjection: config.faultInjection, inboxBypass: config.localRuntime };
 * ```
 */
export interface FunctionBuild {
  /** The fault-injection code (`-c faultInjection=true`). */
  faultInjection: boolean;
  /** The inbox-claim bypass of the local runtime's build (`-c localRuntime=true`); never deployable. */
  inboxBypass: boolean;
  /**
   * OpenTelemetry through the AWS Distro for OpenTelemetry (ADOT) Lambda layer ({@link ADOT_NODEJS_LAYER}):
   * the layer on every function, `AWS_LAMBDA_EXEC_WRAPPER=/opt/otel-instrument`, the managed policy
   * {@link ADOT_MANAGED_POLICY} on its role, and a bundle whose `handler` export the wrapper can replace.
   * Traces go to X-Ray, with the mechanism's hops as spans in them; Application Signals gets the
   * functions' metrics. The cost is in docs/cost.md.
   * @default false
   */
  openTelemetry?: boolean;
  /**
   * Which `Span` log lines the functions write ({@link SpanSampling}): set on every function as
   * `SPAN_SAMPLE_RATE` and `SLOW_SPAN_MS`.
   * @default - every trace's (DEFAULT_SPAN_SAMPLING), no variable set
   */
  spanSampling?: SpanSampling;
}

/** AWS's account that publishes the layer in most Regions; an opt-in Region has its own. */
const ADOT_ACCOUNT = '615299751070';

/**
 * The AWS Distro for OpenTelemetry (ADOT) Lambda layer for Node.js that AWS recommends: the optimized
 * `AWSOpenTelemetryDistroJs` layer (no collector inside; it sends traces to X-Ray and Application
 * Signals). AWS documents it on the ADOT site's "AWS Distro for OpenTelemetry Lambda" page (section
 * "ADOT Lambda Layer ARNs", Node.js tab) and in the CloudWatch guide's "Enable your applications on
 * Lambda"; the CDK's own `adotInstrumentation` prop still uses the legacy layers with a collector.
 * One layer serves both architectures; it is published per Region, under the account and version
 * below (`arn:aws:lambda:<region>:<account>:layer:AWSOpenTelemetryDistroJs:<version>`). To take a
 * newer release, copy its Region table here.
 *
 * @example
 * ```ts
 * ADOT_NODEJS_LAYER.regions['eu-west-1']; // { account: '615299751070', version: 13 }
 * ```
 */
export const ADOT_NODEJS_LAYER: {
  readonly name: string;
  /**
   * The `@opentelemetry/api` version the layer registers. The bundles' own copy (package.json) must be
   * of no later a minor version: a later one refuses the layer's global API and stays a no-op.
   */
  readonly openTelemetryApi: string;
  readonly regions: Readonly<Record<string, { readonly account: string; readonly version: number }>>;
} = {
  name: 'AWSOpenTelemetryDistroJs',
  openTelemetryApi: '1.9.1',
  regions: {
    'af-south-1': { account: '904233096616', version: 13 },
    'ap-east-1': { account: '888577020596', version: 13 },
    'ap-northeast-1': { account: ADOT_ACCOUNT, version: 13 },
    'ap-northeast-2': { account: ADOT_ACCOUNT, version: 13 },
    'ap-northeast-3': { account: ADOT_ACCOUNT, version: 13 },
    'ap-south-1': { account: ADOT_ACCOUNT, version: 13 },
    'ap-south-2': { account: '796973505492', version: 13 },
    'ap-southeast-1': { account: ADOT_ACCOUNT, version: 13 },
    'ap-southeast-2': { account: ADOT_ACCOUNT, version: 13 },
    'ap-southeast-3': { account: '039612877180', version: 13 },
    'ap-southeast-4': { account: '713881805771', version: 13 },
    'ap-southeast-5': { account: '152034782359', version: 6 },
    'ap-southeast-7': { account: '980416031188', version: 6 },
    'ca-central-1': { account: ADOT_ACCOUNT, version: 13 },
    'ca-west-1': { account: '595944127152', version: 6 },
    'eu-central-1': { account: ADOT_ACCOUNT, version: 13 },
    'eu-central-2': { account: '156041407956', version: 13 },
    'eu-north-1': { account: ADOT_ACCOUNT, version: 13 },
    'eu-south-1': { account: '257394471194', version: 13 },
    'eu-south-2': { account: '490004653786', version: 13 },
    'eu-west-1': { account: ADOT_ACCOUNT, version: 13 },
    'eu-west-2': { account: ADOT_ACCOUNT, version: 13 },
    'eu-west-3': { account: ADOT_ACCOUNT, version: 13 },
    'il-central-1': { account: '746669239226', version: 13 },
    'me-central-1': { account: '739275441131', version: 13 },
    'me-south-1': { account: '980921751758', version: 12 },
    'mx-central-1': { account: '610118373846', version: 6 },
    'sa-east-1': { account: ADOT_ACCOUNT, version: 13 },
    'us-east-1': { account: ADOT_ACCOUNT, version: 13 },
    'us-east-2': { account: ADOT_ACCOUNT, version: 13 },
    'us-west-1': { account: ADOT_ACCOUNT, version: 13 },
    'us-west-2': { account: ADOT_ACCOUNT, version: 13 },
  },
};

/**
 * The ARN of {@link ADOT_NODEJS_LAYER} in `region`; a Region it is not published in is refused, by name.
 *
 * @example
 * ```ts
 * adotNodejsLayerArn('eu-west-1'); // 'arn:aws:lambda:eu-west-1:615299751070:layer:AWSOpenTelemetryDistroJs:13'
 * ```
 */
export function adotNodejsLayerArn(region: string): string {
  const published = Object.hasOwn(ADOT_NODEJS_LAYER.regions, region) ? ADOT_NODEJS_LAYER.regions[region] : undefined;
  if (published === undefined)
    throw new Error(
      `The ADOT layer ${ADOT_NODEJS_LAYER.name} is not published in ${region}: openTelemetry=true needs one of ${Object.keys(ADOT_NODEJS_LAYER.regions).join(', ')}`,
    );
  return `arn:aws:lambda:${region}:${published.account}:layer:${ADOT_NODEJS_LAYER.name}:${published.version}`;
}

/**
 * The layer's ARN for the stack of `scope`: the Region's own when the stack names its Region, else
 * looked up at deploy time in a mapping of every Region the layer is published in (one per stack).
 */
function adotLayerArnOf(scope: Construct): string {
  const stack = Stack.of(scope);
  if (!Token.isUnresolved(stack.region)) return adotNodejsLayerArn(stack.region);
  const id = 'AdotNodejsLayerArns';
  const mapping =
    (stack.node.tryFindChild(id) as CfnMapping | undefined) ??
    new CfnMapping(stack, id, {
      mapping: Object.fromEntries(
        Object.keys(ADOT_NODEJS_LAYER.regions).map((region) => [region, { arn: adotNodejsLayerArn(region) }]),
      ),
      lazy: true,
    });
  return mapping.findInMap(stack.region, 'arn');
}

/**
 * The wrapper script the ADOT layer installs: Lambda runs it first (`AWS_LAMBDA_EXEC_WRAPPER`), and it
 * starts OpenTelemetry (AWS SDK, HTTP and Lambda instrumentation by default) before the handler loads.
 *
 * @example
 * ```ts
 * fn.addEnvironment('AWS_LAMBDA_EXEC_WRAPPER', ADOT_EXEC_WRAPPER);
 * ```
 */
export const ADOT_EXEC_WRAPPER = '/opt/otel-instrument';

/**
 * The AWS managed policy the layer's execution role needs (AWS's "Enable your applications on Lambda"
 * names it): writes to X-Ray and to the Application Signals log group (`/aws/application-signals/data`).
 *
 * @example
 * ```ts
 * role.addManagedPolicy(iam.ManagedPolicy.fromAwsManagedPolicyName(ADOT_MANAGED_POLICY));
 * ```
 */
export const ADOT_MANAGED_POLICY = 'CloudWatchLambdaApplicationSignalsExecutionRolePolicy';

const FUNCTION_BUILD_CONTEXT = 'exactly-once:function-build';

/**
 * Sets the build of every FunctionWithDefaults under `scope` (an application's own functions: its
 * API's); call before adding any of them. ExactlyOnce builds its functions from its own props
 * (`faultInjection`, `localRuntime`, `openTelemetry`, `spanSampling`) and sets them on itself, so what
 * is set on the stack does not reach them.
 *
 * @example
 * ```ts
 * const stack = new Stack(app, 'Orders');
 * setFunctionBuild(stack, { faultInjection: false, inboxBypass: false }); // before any function is added
 * ```
 */
export function setFunctionBuild(scope: Construct, build: FunctionBuild): void {
  scope.node.setContext(FUNCTION_BUILD_CONTEXT, build);
}

/**
 * The build set on `scope` or an ancestor by {@link setFunctionBuild}; none set: no optional code.
 *
 * @example
 * ```ts
 * const bundling = lambdaBundling(functionBuildOf(this)); // what a function under `this` is built with
 * ```
 */
export function functionBuildOf(scope: Construct): FunctionBuild {
  return (
    (scope.node.tryGetContext(FUNCTION_BUILD_CONTEXT) as FunctionBuild | undefined) ?? {
      faultInjection: false,
      inboxBypass: false,
    }
  );
}

/**
 * The esbuild `define`s of a build. The bundler replaces each `process.env.<flag>` read with a
 * literal, so in a bundle built without the flag the guarded code is dead and esbuild drops it,
 * modules included: a deployment without fault injection has no fault code to switch on. The
 * guard is written `process.env.FAULT_INJECTION_BUILD === 'true'` where it is used: esbuild folds
 * a literal comparison, not a constant imported from another module. Outside a bundle (unit tests
 * run the source) the guards read the real environment, which leaves them off.
 * - `FAULT_INJECTION_BUILD`: `-c faultInjection=true` (never prod): the plan source and the fault decorators.
 * - `INBOX_BYPASS_BUILD`: the local runtime's build only (`-c localRuntime=true`): the switch that
 *   turns a consumer's inbox claim off, to prove the proof kit's verification can fail.
 *
 * @example
 * ```ts
 * // In a handler: dropped from every bundle built without fault injection
 * if (process.env.FAULT_INJECTION_BUILD === 'true') faults = consumerFaults(consumer);
 * // The defines that make it so:
 * bundleDefines({ faultInjection: false, inboxBypass: false }); // { 'process.env.FAULT_INJECTION_BUILD': '"false"', ... }
 * ```
 */
export function bundleDefines(build: FunctionBuild): Record<string, string> {
  return {
    'process.env.FAULT_INJECTION_BUILD': JSON.stringify(String(build.faultInjection)),
    'process.env.INBOX_BYPASS_BUILD': JSON.stringify(String(build.inboxBypass)),
  };
}

/**
 * The bundling of every function (also what the bundle test builds with, so the two cannot drift).
 *
 * @example
 * ```ts
 * await esbuild.build({ entryPoints: [entryPointPath(entry)], bundle: true, define: lambdaBundling(build).define });
 * ```
 */
export function lambdaBundling(build: FunctionBuild) {
  return {
    // esbuild's CommonJS exports are getters the ADOT wrapper cannot replace where it wraps `handler`
    // in place ("Cannot redefine property: handler"): its require path does, and which path it takes
    // (require or import) depends on the runtime and the bundle. Copied into a plain object, they are
    // plain values either way.
    ...(build.openTelemetry === true ? { footer: 'module.exports = { ...module.exports };' } : {}),
    minify: true,
    sourceMap: true,
    target: 'node24',
    format: OutputFormat.CJS,
    // Bundle the SDK too: the function runs the exact versions the tests ran.
    externalModules: [] as string[],
    forceDockerBundling: false,
    define: bundleDefines(build),
  };
}

export { PROJECT_DIR };

/**
 * The module of an entry (a path relative to the project root). Throws at synth, in one line, for
 * a file that is not there, rather than leaving it to a bundling error.
 *
 * @example
 * ```ts
 * entryPointPath('lambdas/my-app/entry-points/create-order.ts'); // the absolute path, or a one-line error at synth
 * ```
 */
export function entryPointPath(entry: string): string {
  const file = path.resolve(PROJECT_DIR, entry);
  if (!fs.existsSync(file)) {
    throw new Error(`Entry ${entry} does not exist (a path relative to the project root)`);
  }
  return file;
}

/**
 * The Powertools metrics namespace of every function: alarms and the dashboard read the consumers' metrics under it.
 *
 * @example
 * ```ts
 * new cloudwatch.Metric({ namespace: METRICS_NAMESPACE, metricName: 'EffectApplied', dimensionsMap: { consumer: 'loyalty' } });
 * ```
 */
export const METRICS_NAMESPACE = 'ExactlyOnce';

/**
 * What a function says about itself; every other setting is the project's default (see FunctionWithDefaults).
 *
 * @example
 * ```ts
 * const props: FunctionWithDefaultsProps = { entry: 'lambdas/my-app/entry-points/get-order.ts', timeout: Duration.seconds(10) };
 * ```
 */
export interface FunctionWithDefaultsProps {
  /**
   * The module the function runs (its exported `handler`), as a path relative to the project
   * root, e.g. `lambdas/my-app/entry-points/create-order.ts`.
   */
  readonly entry: string;
  /**
   * Its name in alarms (alarm ids derive from it, so it is unique in the stack).
   * @default the entry's file name without its extension, e.g. `create-order`
   */
  readonly name?: string;
  /**
   * How long an invocation may run. Queue visibility timeouts are derived from it, so set it deliberately.
   * @default Duration.seconds(10)
   */
  readonly timeout?: Duration;
  /**
   * Memory, in MiB.
   * @default 256
   */
  readonly memorySize?: number;
  /**
   * The function's own variables, beside the ones every function gets (Powertools' service name and
   * metrics namespace, NODE_OPTIONS, CODE_VERSION).
   * @default - none of its own
   */
  readonly environment?: Record<string, string>;
  /**
   * Async invocations (schedules, events) that fail land in an encrypted, TLS-only SQS dead-letter
   * queue instead of vanishing. Only a function that is never invoked asynchronously may turn it off.
   * @default true
   */
  readonly asyncDeadLetterQueue?: boolean;
  /**
   * Reserved concurrency: refused at synth unless the stack allows it (the ReservedConcurrency rule),
   * since an account's unreserved pool has a floor.
   * @default - none reserved
   */
  readonly reservedConcurrentExecutions?: number;
}

/**
 * Every Lambda default of the project lives here:
 * - Node.js 24 on arm64, bundled by the local esbuild (no Docker), minified,
 *   with source maps and the AWS SDK v3 bundled at the version we test with,
 *   and fault code only in a build that asks for it ({@link setFunctionBuild});
 * - timeout 10 s, memory 256 MiB, X-Ray tracing active;
 * - its own log group, JSON logs, retention one month, and a role that may
 *   write to that log group only (the AWS-managed basic execution role would
 *   allow every log group in the account);
 * - Powertools service name (the stack's name, {@link serviceName}) and metrics namespace set;
 * - async invocations: an SQS dead-letter queue (SSE, TLS only), 2 retries, 6 h max event age;
 * - `CODE_VERSION`: its bundle's asset hash (12 characters), so what it writes (a DLQ copy) says
 *   which code wrote it;
 * - OpenTelemetry off; with the stack's `openTelemetry` build ({@link setFunctionBuild}), the ADOT
 *   layer ({@link ADOT_NODEJS_LAYER}), `AWS_LAMBDA_EXEC_WRAPPER=/opt/otel-instrument` and the
 *   managed policy {@link ADOT_MANAGED_POLICY}.
 *
 * @example
 * ```ts
 * const getOrder = new FunctionWithDefaults(this, 'GetOrder', {
 *   entry: 'lambdas/my-app/entry-points/get-order.ts',
 *   environment: { ORDERS_TABLE_NAME: table.tableName },
 *   asyncDeadLetterQueue: false, // invoked synchronously by API Gateway only
 * });
 * grantTableActions(getOrder.fn, table, ['GetItem']);
 * ```
 */
export class FunctionWithDefaults extends Construct {
  readonly fn: NodejsFunction;
  readonly asyncDeadLetterQueue?: sqs.Queue;
  /** Its module, relative to the project root (`props.entry`). */
  readonly entry: string;
  /** Its name in alarms (`props.name`, default the entry's file name). */
  readonly name: string;

  constructor(scope: Construct, id: string, props: FunctionWithDefaultsProps) {
    super(scope, id);
    this.entry = props.entry;
    this.name = props.name ?? path.basename(props.entry, path.extname(props.entry));

    if (props.asyncDeadLetterQueue !== false) {
      this.asyncDeadLetterQueue = new sqs.Queue(this, 'AsyncDlq', deadLetterQueueProps());
    }

    const logGroup = new logs.LogGroup(this, 'Logs', defaultLogGroupProps());
    const role = new iam.Role(this, 'Role', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
    // The group exists before the function (it is in the template), so CreateLogGroup is not needed.
    logGroup.grant(role, 'logs:CreateLogStream', 'logs:PutLogEvents');

    this.fn = new NodejsFunction(this, 'Fn', {
      entry: entryPointPath(props.entry),
      handler: 'handler',
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      timeout: props.timeout ?? Duration.seconds(10),
      memorySize: props.memorySize ?? 256,
      tracing: lambda.Tracing.ACTIVE,
      logGroup,
      role,
      loggingFormat: lambda.LoggingFormat.JSON,
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      // Async-invocation settings only where there are async invocations: a synchronously invoked
      // function would get an EventInvokeConfig that never applies.
      ...(this.asyncDeadLetterQueue !== undefined
        ? { deadLetterQueue: this.asyncDeadLetterQueue, retryAttempts: 2, maxEventAge: Duration.hours(6) }
        : {}),
      environment: {
        POWERTOOLS_SERVICE_NAME: serviceName(this),
        POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
        POWERTOOLS_LOG_LEVEL: 'INFO',
        NODE_OPTIONS: '--enable-source-maps',
        ...props.environment,
      },
      bundling: lambdaBundling(functionBuildOf(this)),
    });

    const spanSampling = functionBuildOf(this).spanSampling;
    if (spanSampling !== undefined) {
      this.fn.addEnvironment(SPAN_SAMPLING_ENV.rate, String(spanSampling.rate));
      this.fn.addEnvironment(SPAN_SAMPLING_ENV.slowMs, String(spanSampling.slowMs));
    }

    if (functionBuildOf(this).openTelemetry === true) {
      this.fn.addLayers(lambda.LayerVersion.fromLayerVersionArn(this, 'AdotLayer', adotLayerArnOf(this)));
      this.fn.addEnvironment('AWS_LAMBDA_EXEC_WRAPPER', ADOT_EXEC_WRAPPER);
      role.addManagedPolicy(iam.ManagedPolicy.fromAwsManagedPolicyName(ADOT_MANAGED_POLICY));
      Validations.of(role).acknowledge({
        id: `AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/${ADOT_MANAGED_POLICY}]`,
        reason:
          'The ADOT layer (openTelemetry=true) needs what AWS documents for it: this managed policy writes to X-Ray and to the Application Signals log group only.',
      });
    }

    // The bundle's asset hash, read when the template is rendered: a code change changes it.
    const cfn = this.fn.node.defaultChild as lambda.CfnFunction;
    this.fn.addEnvironment(
      ENV.codeVersion,
      Lazy.string({ produce: () => codeVersionOf(Stack.of(this).resolve(cfn.code) as { s3Key?: unknown }) }),
    );

    Validations.of(this.fn).acknowledge({
      id: 'AwsSolutions-L1',
      reason:
        'Node.js 24 (nodejs24.x, LTS) is the project baseline: the functions, the local runtime and CI run one Node version; a move to nodejs26.x moves all three together.',
    });
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'Active X-Ray tracing adds xray:PutTraceSegments and xray:PutTelemetryRecords, which support no resource-level permissions.',
    });
  }
}

/** A function's code version: the first 12 characters of its asset's key (`<hash>.zip`), or 'unknown'. */
function codeVersionOf(code: { s3Key?: unknown }): string {
  return typeof code.s3Key === 'string' ? code.s3Key.replace(/\.zip$/, '').slice(0, 12) : 'unknown';
}
