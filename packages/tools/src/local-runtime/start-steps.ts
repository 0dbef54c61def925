import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import * as fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import * as os from 'node:os';
import * as path from 'node:path';
import { ENV, providerEnvNames } from '@exactly-once/runtime/env-names';
import { fauxqsQueueMetrics, AlarmEvaluator } from './alarms';
import { countCall, startCountingProxy, type CountingProxy } from './call-counter';
import { MetricStore } from './metrics';
import { SpanStore } from './spans';
import { startDynamoDbLocal, startFauxqs, type Emulator } from './emulators';
import { FunctionHost } from './host/function-host';
import type { Logger } from './log';
import type { LocalTable } from './provision';
import type { RuntimeOptions, RuntimeStats } from './runtime-options';
import { Scheduler } from './scheduler';
import { DynamoDbStreamsClient } from './sources/dynamodb-streams-client';
import { SqsPoller, type LocalQueue } from './sources/sqs-poller';
import { StreamPoller } from './sources/stream-poller';
import { alarmDefinitions } from './template/alarms';
import { restApiDefinitions } from './template/api';
import type { StackArtifact } from './template/cloud-assembly';
import { tableDefinitions } from './template/dynamodb';
import { eventSourceDefinitions } from './template/event-sources';
import type { IntrinsicResolver } from './template/intrinsics';
import { formatInventory, inventorySummary, notEmulatedTypes } from './template/inventory';
import { functionDefinitions, type FunctionDefinition } from './template/lambda';
import { LOCAL_ACCOUNT_ID, TemplateError } from './template/model';
import type { LocalReferences } from './template/references';
import { scheduleDefinitions } from './template/schedules';
import { queueDefinitions } from './template/sqs';
import { servedApis, startProviderEmulator, type ProviderEmulator } from './provider';

/**
 * The steps startRuntime takes, in its order (runtime.ts `start`). Each registers how to undo what it
 * started in `stoppers`, which run in reverse when the runtime stops or a later step fails.
 */
export type Stoppers = (() => Promise<void>)[];

/** 1. Everything the runtime reads of the template, and what it leaves out (fails fast, before anything starts). */
export function readTemplate(stack: StackArtifact) {
  const { template } = stack;
  const tableDefs = tableDefinitions(template);
  const queueDefs = queueDefinitions(template);
  const functionDefs = functionDefinitions(stack);
  const sourceDefs = eventSourceDefinitions(template);
  const apis = restApiDefinitions(template);
  const scheduleDefs = scheduleDefinitions(template);
  const alarmDefs = alarmDefinitions(template);
  const partial = [
    ...sourceDefs.unsupported,
    ...scheduleDefs.unsupported,
    ...alarmDefs.unsupported,
    ...apis.flatMap((a) => a.unsupportedMethods),
    ...apis.slice(1).map((a) => ({ logicalId: a.logicalId, reason: 'only the first REST API of the stack is served' })),
  ];
  const inventory = formatInventory(notEmulatedTypes(template), partial);
  const summary = inventorySummary(notEmulatedTypes(template), partial);
  return { tableDefs, queueDefs, functionDefs, sourceDefs, apis, scheduleDefs, alarmDefs, inventory, summary };
}

/** The emulators, their counting proxies and the runtime's own clients. */
export interface Emulated {
  dynamo?: Emulator;
  sqsEmulator?: Emulator;
  dynamoProxy?: CountingProxy;
  sqsProxy?: CountingProxy;
  sqs: SQSClient;
  dynamodb: DynamoDBClient;
  /** The pollers' client: straight to fauxqs, its calls counted on the SQS proxy's counts. */
  pollerSqs: SQSClient;
}

/** 2. Emulators, only those the template needs, in parallel. */
export async function startEmulators(
  region: string,
  needs: { dynamodb: boolean; sqs: boolean },
  stoppers: Stoppers,
  emulators: Emulator[],
): Promise<Emulated> {
  const [dynamo, sqsEmulator] = await Promise.all([
    needs.dynamodb ? startDynamoDbLocal() : undefined,
    needs.sqs ? startFauxqs({ region }) : undefined,
  ]);
  for (const emulator of [dynamo, sqsEmulator]) {
    if (emulator === undefined) continue;
    emulators.push(emulator);
    stoppers.push(() => emulator.stop());
  }
  // Functions and pollers reach the emulators through counting proxies (the proof kit's calls per order).
  const dynamoProxy = dynamo ? await startCountingProxy(dynamo.endpoint) : undefined;
  const sqsProxy = sqsEmulator ? await startCountingProxy(sqsEmulator.endpoint) : undefined;
  for (const proxy of [dynamoProxy, sqsProxy]) if (proxy !== undefined) stoppers.push(() => proxy.stop());
  const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
  // An explicit endpoint: fauxqs's queue URLs name a host that does not resolve (docs/pitfalls.md).
  const sqs = new SQSClient({ region, endpoint: sqsEmulator?.endpoint ?? 'http://127.0.0.1:1', credentials });
  const dynamodb = new DynamoDBClient({ region, endpoint: dynamo?.endpoint ?? 'http://127.0.0.1:1', credentials });
  // The pollers' receives and deletes are billed on AWS too, so they are counted, but they go
  // straight to fauxqs: a proxy in between changes which of several waiting long polls gets a message.
  const pollerSqs = new SQSClient({ region, endpoint: sqsEmulator?.endpoint ?? 'http://127.0.0.1:1', credentials });
  if (sqsProxy !== undefined) {
    pollerSqs.middlewareStack.add(
      (next, context) => async (args) => {
        countCall(sqsProxy.counts, context.commandName?.replace(/Command$/, '') ?? 'unknown');
        return next(args);
      },
      { step: 'initialize', name: 'countPollerCalls' },
    );
  }
  stoppers.push(async () => {
    sqs.destroy();
    pollerSqs.destroy();
    dynamodb.destroy();
  });
  return { dynamo, sqsEmulator, dynamoProxy, sqsProxy, sqs, dynamodb, pollerSqs };
}

/** The local provider as the functions reach it: its endpoints and key file in their environment. */
export interface LocalProviderSetup {
  provider?: ProviderEmulator;
  keyFile?: string;
  environment: Record<string, string>;
}

/** 4. The local provider, when a function consumes (it writes the provider log on AWS without one configured). */
export async function startLocalProvider(
  options: RuntimeOptions,
  functionDefs: readonly FunctionDefinition[],
  stoppers: Stoppers,
): Promise<LocalProviderSetup> {
  const consumes = functionDefs.some((fn) => fn.environment[ENV.providerLogTable] !== undefined);
  if (options.localProviders === false || !consumes) return { environment: {} };
  const apiKey = randomBytes(18).toString('base64url');
  const keyDir = options.outputsFile !== undefined ? path.dirname(options.outputsFile) : os.tmpdir();
  fs.mkdirSync(keyDir, { recursive: true });
  // A file, as on AWS the key is a parameter: never in a function's environment.
  const keyFile = path.join(keyDir, `provider-api-key-${process.pid}`);
  fs.writeFileSync(keyFile, apiKey, { mode: 0o600 });
  stoppers.push(async () => fs.rmSync(keyFile, { force: true }));
  const provider = await startProviderEmulator({
    apiKey,
    apis: servedApis(options.domain.consumers, options.domain.localProviders),
    keyless: options.keylessProviders,
    log: (line) => options.log('provider', line),
  });
  stoppers.push(() => provider.stop());
  let environment: Record<string, string> = {};
  for (const name of Object.keys(provider.endpoints)) {
    const names = providerEnvNames(name);
    environment = { ...environment, [names.endpoint]: provider.endpoints[name], [names.apiKeyFile]: keyFile };
  }
  return { provider, keyFile, environment };
}

/** The function hosts by logical id, with the stores their metric and span lines go to. */
export interface Hosts {
  hosts: Map<string, FunctionHost>;
  metrics: MetricStore;
  spans: SpanStore;
  hostOf(logicalId: string): FunctionHost;
}

/** 5. Function hosts with the template environment resolved. */
export function createHosts(
  options: RuntimeOptions,
  region: string,
  functions: { defs: readonly FunctionDefinition[]; arnOf: (name: string) => string },
  resolver: IntrinsicResolver,
  emulated: Pick<Emulated, 'dynamoProxy' | 'sqsProxy'>,
  providerEnvironment: Record<string, string>,
  stoppers: Stoppers,
): Hosts {
  const { dynamoProxy, sqsProxy } = emulated;
  const hosts = new Map<string, FunctionHost>();
  const metrics = new MetricStore();
  const spans = new SpanStore();
  for (const fn of functions.defs) {
    const environment = Object.fromEntries(
      Object.entries(fn.environment).map(([name, value]) => [
        name,
        resolver.resolveString(value, `${fn.logicalId} environment ${name}`),
      ]),
    );
    // The proof kit's fault switch: functions read the run's plan from this file (on AWS, an SSM parameter).
    if (options.faultInjectionFile !== undefined) environment.FAULT_INJECTION_FILE = options.faultInjectionFile;
    // Every consumer may reach every local provider; each calls those its spec names.
    if (environment[ENV.providerLogTable] !== undefined) Object.assign(environment, providerEnvironment);
    const host = new FunctionHost(
      { ...fn, arn: functions.arnOf(fn.functionName), environment },
      {
        region,
        endpoints: {
          ...(dynamoProxy ? { DYNAMODB: dynamoProxy.endpoint } : {}),
          ...(sqsProxy ? { SQS: sqsProxy.endpoint } : {}),
        },
        log: options.log,
        maxConcurrency: options.maxConcurrency,
        hideMetrics: options.showMetrics !== true,
        onMetrics: (line) => metrics.record(line),
        hideSpans: options.showSpans !== true,
        onSpan: (line) => spans.record(line),
      },
    );
    hosts.set(fn.logicalId, host);
    stoppers.push(() => host.stop());
  }
  const hostOf = (logicalId: string) => {
    const host = hosts.get(logicalId);
    if (host === undefined) throw new TemplateError(`${logicalId} is not a hosted function`);
    return host;
  };
  return { hosts, metrics, spans, hostOf };
}

/** What the event sources, schedules and alarms are wired to: the resources made and how to find them. */
export interface Wiring {
  region: string;
  log: Logger;
  emulated: Emulated;
  hosts: Hosts;
  queues: Map<string, LocalQueue>;
  tables: Map<string, LocalTable>;
  resolver: IntrinsicResolver;
  queueByArn(arn: string): LocalQueue | undefined;
}

/** 6. Event sources. Stream iterators are taken before the API serves, so LATEST misses nothing. */
export async function startEventSources(
  sources: ReturnType<typeof eventSourceDefinitions>['sources'],
  wiring: Wiring,
  stoppers: Stoppers,
): Promise<void> {
  const { region, log, emulated, queues, tables, resolver } = wiring;
  const { hosts, hostOf } = wiring.hosts;
  const streams = emulated.dynamo ? new DynamoDbStreamsClient(emulated.dynamo.endpoint, region) : undefined;
  const pollers: { stop(): Promise<void> }[] = [];
  // Stopping: abort every poller first, then stop the functions (killing in-flight invocations), then wait for the pollers.
  stoppers.push(async () => {
    const stopping = pollers.map((p) => p.stop());
    await Promise.all([...hosts.values()].map((h) => h.stop()));
    await Promise.all(stopping);
  });
  for (const source of sources) {
    const host = hostOf(source.functionLogicalId);
    const sourceLog = (line: string) =>
      log(`${host.fn.displayName} <- ${source.kind === 'sqs' ? 'SQS' : 'stream'}`, line);
    if (source.kind === 'sqs') {
      const queue = queues.get(source.queueLogicalId)!;
      const poller = new SqsPoller(source, queue, host, emulated.pollerSqs, region, sourceLog);
      pollers.push(poller);
      poller.start();
    } else {
      const table = tables.get(source.tableLogicalId);
      if (table?.streamArn === undefined || streams === undefined)
        throw new TemplateError(`${source.logicalId}: table ${source.tableLogicalId} has no stream`);
      const destinationArn =
        source.onFailureDestination === undefined
          ? undefined
          : resolver.resolveString(source.onFailureDestination, `${source.logicalId} destination`);
      const destinationQueue = destinationArn === undefined ? undefined : wiring.queueByArn(destinationArn);
      const poller = new StreamPoller(
        source,
        table.streamArn,
        host,
        streams,
        emulated.sqs,
        { queue: destinationQueue, description: destinationQueue ? undefined : destinationArn },
        region,
        sourceLog,
      );
      pollers.push(poller);
      await poller.start();
    }
  }
}

/** 7. Schedules (asynchronous invocations with retries and the function's DLQ). */
export function startSchedules(
  stack: StackArtifact,
  defs: { schedules: ReturnType<typeof scheduleDefinitions>['schedules']; functions: readonly FunctionDefinition[] },
  references: LocalReferences,
  wiring: Wiring,
  timeScale: number | undefined,
  stoppers: Stoppers,
): void {
  const { region, log, resolver } = wiring;
  const scale = timeScale ?? 1;
  const scheduler = new Scheduler(
    defs.schedules.map((definition) => ({
      definition,
      ruleArn: references.arn(
        'events',
        `rule/${String(stack.template.Resources[definition.ruleLogicalId].Properties?.Name ?? definition.ruleLogicalId)}`,
      ),
    })),
    (functionLogicalId) => {
      const fn = defs.functions.find((f) => f.logicalId === functionLogicalId)!;
      const dlqArn =
        fn.deadLetterTarget === undefined
          ? undefined
          : resolver.resolveString(fn.deadLetterTarget, `${fn.logicalId} DeadLetterConfig`);
      const dlq = dlqArn === undefined ? undefined : wiring.queueByArn(dlqArn);
      const host = wiring.hosts.hostOf(functionLogicalId);
      return {
        host,
        async: {
          retryAttempts: fn.asyncRetryAttempts,
          retryDelaysMs: [60_000 * scale, 120_000 * scale],
          deadLetter: dlq ? { url: dlq.url, sqs: wiring.emulated.sqs } : undefined,
          log: (line) => log(`${host.fn.displayName} <- schedule`, line),
        },
      };
    },
    region,
    LOCAL_ACCOUNT_ID,
    scale,
  );
  scheduler.start();
  stoppers.push(() => scheduler.stop());
}

/** 8. Alarms on SQS metrics; undefined when the template has none or no queue is emulated. */
export function startAlarms(
  alarms: ReturnType<typeof alarmDefinitions>['alarms'],
  wiring: Wiring,
  intervalMs: number | undefined,
  stoppers: Stoppers,
): AlarmEvaluator | undefined {
  const sqsEmulator = wiring.emulated.sqsEmulator;
  if (alarms.length === 0 || sqsEmulator === undefined) return undefined;
  const fauxqsEndpoint = sqsEmulator.endpoint;
  const evaluator = new AlarmEvaluator(
    alarms.map((definition) => ({
      definition,
      queueName: wiring.queues.get(definition.queueLogicalId)!.name,
      actions: definition.actions.map((a) => wiring.resolver.resolveString(a, `${definition.logicalId} AlarmActions`)),
    })),
    (queueName) => fauxqsQueueMetrics(fauxqsEndpoint, queueName),
    (line) => wiring.log('alarm', line),
    intervalMs,
  );
  evaluator.start();
  stoppers.push(() => evaluator.stop());
  return evaluator;
}

/** The runtime's counters now: what the proxies counted, the invocations, the metrics and each function's evidence. */
export function runtimeStats(emulated: Pick<Emulated, 'dynamoProxy' | 'sqsProxy'>, hosts: Hosts): RuntimeStats {
  const { dynamoProxy, sqsProxy } = emulated;
  return {
    dynamodbWrites: dynamoProxy?.counts.writeUnits ?? 0,
    dynamodbReads: dynamoProxy?.counts.readUnits ?? 0,
    dynamodbCalls: dynamoProxy?.counts.total ?? 0,
    dynamodbByTable: Object.fromEntries(
      Object.entries(dynamoProxy?.counts.byTable ?? {}).map(([table, units]) => [table, { ...units }]),
    ),
    sqs: sqsProxy?.counts.total ?? 0,
    lambdaInvocations: [...hosts.hosts.values()].reduce((n, h) => n + h.stats.invocations, 0),
    byOperation: { dynamodb: { ...dynamoProxy?.counts.byOperation }, sqs: { ...sqsProxy?.counts.byOperation } },
    metrics: hosts.metrics.snapshot(),
    functions: Object.fromEntries(
      [...hosts.hosts.values()].map((h) => [h.fn.displayName, { crashes: h.stats.crashes, ...h.deliveries.counts }]),
    ),
  };
}
