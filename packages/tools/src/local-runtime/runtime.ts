import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DeliveryCounts } from './host/delivery-evidence';
import { SQSClient } from '@aws-sdk/client-sqs';
import * as fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import * as os from 'node:os';
import * as path from 'node:path';
import { ENV, providerEnvNames } from '@exactly-once/runtime/env-names';
import { fauxqsQueueMetrics, AlarmEvaluator } from './alarms';
import { countCall, startCountingProxy } from './call-counter';
import { MetricStore } from './metrics';
import { SpanStore } from './spans';
import { ApiServer } from './api/server';
import { startDynamoDbLocal, startFauxqs, type Emulator } from './emulators';
import { FunctionHost } from './host/function-host';
import type { Logger } from './log';
import { createQueues, createTables, type LocalTable } from './provision';
import { Scheduler } from './scheduler';
import { DynamoDbStreamsClient } from './sources/dynamodb-streams-client';
import { SqsPoller, type LocalQueue } from './sources/sqs-poller';
import { StreamPoller } from './sources/stream-poller';
import { alarmDefinitions } from './template/alarms';
import { restApiDefinitions } from './template/api';
import { readCloudAssembly, selectStack, type StackArtifact } from './template/cloud-assembly';
import { tableDefinitions } from './template/dynamodb';
import { eventSourceDefinitions } from './template/event-sources';
import { IntrinsicResolver } from './template/intrinsics';
import { formatInventory, inventorySummary, notEmulatedTypes } from './template/inventory';
import { functionDefinitions } from './template/lambda';
import { LOCAL_ACCOUNT_ID, TemplateError } from './template/model';
import { LocalReferences } from './template/references';
import { scheduleDefinitions } from './template/schedules';
import { queueDefinitions } from './template/sqs';
import { startProviderEmulator, type ProviderEmulator } from './provider';

export interface RuntimeOptions {
  /** The cloud assembly folder (`cdk.out`). */
  cdkOut: string;
  stackName?: string;
  /** API port; 0 picks a free one. */
  port: number;
  log: Logger;
  /** Shortens schedules and async retry delays (tests). */
  timeScale?: number;
  alarmIntervalMs?: number;
  /** Environments per function without reserved concurrency. */
  maxConcurrency?: number;
  /** Show Powertools' embedded-metric lines (hidden by default: on AWS they become metrics, not logs). */
  showMetrics?: boolean;
  /** Show the functions' span lines, one per hop per order (hidden by default; collected either way). */
  showSpans?: boolean;
  /** Where to write the outputs file; undefined writes none. */
  outputsFile?: string;
  /** Set as FAULT_INJECTION_FILE on every function: the proof kit's per-run fault plan. */
  faultInjectionFile?: string;
  /**
   * Serve the consumers' providers from the local provider (./provider: one API per provider the
   * consumer specs name, with idempotency keys), instead of the recording double the template falls
   * back to. Default true.
   */
  localProviders?: boolean;
  /** Local provider endpoints that ignore the idempotency key, like SMTP or SES (default none). */
  keylessProviders?: string[];
}

/** Requests the functions and pollers made, as AWS would bill them (see call-counter.ts). */
export interface RuntimeStats {
  dynamodbWrites: number;
  dynamodbReads: number;
  dynamodbCalls: number;
  /** Write and read units by table name (the same units as dynamodbWrites / dynamodbReads). */
  dynamodbByTable: Record<string, { writeUnits: number; readUnits: number }>;
  sqs: number;
  lambdaInvocations: number;
  byOperation: { dynamodb: Record<string, number>; sqs: Record<string, number> };
  /** Powertools metrics the functions emitted, summed, e.g. `DuplicateSuppressed{consumer=loyalty}`. */
  metrics: Record<string, number>;
  /** Per function (display name): crashes and delivery evidence, so the proof kit can tell which fault fired. */
  functions: Record<string, { crashes: number } & DeliveryCounts>;
}

export interface LocalOutputs {
  stackName: string;
  region: string;
  apiUrl?: string;
  /** The API's URL with its stage, as the deployed ApiUrl output has it. */
  stageUrl?: string;
  tables: Record<string, string>;
  tableStreamArns: Record<string, string>;
  queues: Record<string, string>;
  queueUrls: Record<string, string>;
  functions: Record<string, string>;
  endpoints: { dynamodb?: string; sqs?: string };
  /** The stack's CloudFormation outputs, resolved to the local resources. */
  stackOutputs: Record<string, string>;
}

export interface LocalRuntime {
  outputs: LocalOutputs;
  hosts: Map<string, FunctionHost>;
  queues: Map<string, LocalQueue>;
  tables: Map<string, LocalTable>;
  /** Lines listing what the runtime does not emulate, each resource by logical id (`npm start -- --details`). */
  inventory: string[];
  /** The same in one line, counts only (what `npm start` prints by default); undefined when nothing is left out. */
  inventorySummary?: string;
  alarms?: AlarmEvaluator;
  /** Every process the runtime started (emulators and function environments). */
  pids(): number[];
  stats(): RuntimeStats;
  stop(): Promise<void>;
}

/**
 * Runs a synthesized stack on one machine: emulators, then the queues and
 * tables the template declares, the functions in their own processes with
 * their resolved environment, the event sources, schedules, alarms and the
 * REST API. Anything started is stopped again if a later step fails.
 */
export async function startRuntime(options: RuntimeOptions): Promise<LocalRuntime> {
  const stack = selectStack(readCloudAssembly(options.cdkOut), options.stackName);
  const stoppers: (() => Promise<void>)[] = [];
  const emulators: Emulator[] = [];
  const stop = async () => {
    for (const stopOne of stoppers.splice(0).reverse()) await stopOne().catch(() => undefined);
  };
  try {
    return await start(stack, options, stoppers, emulators, stop);
  } catch (error) {
    await stop();
    throw error;
  }
}

async function start(
  stack: StackArtifact,
  options: RuntimeOptions,
  stoppers: (() => Promise<void>)[],
  emulators: Emulator[],
  stop: () => Promise<void>,
): Promise<LocalRuntime> {
  const { template, region } = stack;
  const log = options.log;

  // 1. Read the template (fails fast, before anything is started).
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

  // 2. Emulators, only those the template needs, in parallel.
  const needsDynamo = tableDefs.length > 0;
  const needsSqs = queueDefs.length > 0;
  const [dynamo, sqsEmulator] = await Promise.all([
    needsDynamo ? startDynamoDbLocal() : undefined,
    needsSqs ? startFauxqs({ region }) : undefined,
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

  // 3. Resources, registered for Ref / Fn::GetAtt.
  const references = new LocalReferences(template, region, stack.stackName);
  const queues = await createQueues(sqs, queueDefs, references);
  const tables = await createTables(dynamodb, tableDefs, references);
  const lambdaArn = (name: string) => references.arn('lambda', `function:${name}`);
  for (const fn of functionDefs)
    references.register(fn.logicalId, fn.functionName, { Arn: lambdaArn(fn.functionName) });
  apis.forEach((api, i) => references.register(api.logicalId, `local${i || ''}api`, { RootResourceId: 'root' }));
  const resolver = new IntrinsicResolver(template, references, references.pseudoParameters());
  const queueByArn = (arn: string) => [...queues.values()].find((q) => q.arn === arn);

  // 4. The local provider, when a function consumes (it writes the provider log on AWS without one configured).
  const consumes = functionDefs.some((fn) => fn.environment[ENV.providerLogTable] !== undefined);
  let provider: ProviderEmulator | undefined;
  let providerKeyFile: string | undefined;
  let providerEnvironment: Record<string, string> = {};
  if (options.localProviders !== false && consumes) {
    const apiKey = randomBytes(18).toString('base64url');
    const keyDir = options.outputsFile !== undefined ? path.dirname(options.outputsFile) : os.tmpdir();
    fs.mkdirSync(keyDir, { recursive: true });
    // A file, as on AWS the key is a parameter: never in a function's environment.
    const keyFile = path.join(keyDir, `provider-api-key-${process.pid}`);
    fs.writeFileSync(keyFile, apiKey, { mode: 0o600 });
    providerKeyFile = keyFile;
    stoppers.push(async () => fs.rmSync(keyFile, { force: true }));
    provider = await startProviderEmulator({
      apiKey,
      keyless: options.keylessProviders,
      log: (line) => log('provider', line),
    });
    stoppers.push(() => provider!.stop());
    for (const name of Object.keys(provider.endpoints)) {
      const names = providerEnvNames(name);
      providerEnvironment = {
        ...providerEnvironment,
        [names.endpoint]: provider.endpoints[name],
        [names.apiKeyFile]: keyFile,
      };
    }
  }

  // 5. Function hosts with the template environment resolved.
  const hosts = new Map<string, FunctionHost>();
  const metrics = new MetricStore();
  const spans = new SpanStore();
  for (const fn of functionDefs) {
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
      { ...fn, arn: lambdaArn(fn.functionName), environment },
      {
        region,
        endpoints: {
          ...(dynamoProxy ? { DYNAMODB: dynamoProxy.endpoint } : {}),
          ...(sqsProxy ? { SQS: sqsProxy.endpoint } : {}),
        },
        log,
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

  // 6. Event sources. Stream iterators are taken before the API serves, so LATEST misses nothing.
  const streams = dynamo ? new DynamoDbStreamsClient(dynamo.endpoint, region) : undefined;
  const pollers: { stop(): Promise<void> }[] = [];
  // Stopping: abort every poller first, then stop the functions (killing in-flight invocations), then wait for the pollers.
  stoppers.push(async () => {
    const stopping = pollers.map((p) => p.stop());
    await Promise.all([...hosts.values()].map((h) => h.stop()));
    await Promise.all(stopping);
  });
  for (const source of sourceDefs.sources) {
    const host = hostOf(source.functionLogicalId);
    const sourceLog = (line: string) =>
      log(`${host.fn.displayName} <- ${source.kind === 'sqs' ? 'SQS' : 'stream'}`, line);
    if (source.kind === 'sqs') {
      const poller = new SqsPoller(source, queues.get(source.queueLogicalId)!, host, pollerSqs, region, sourceLog);
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
      const destinationQueue = destinationArn === undefined ? undefined : queueByArn(destinationArn);
      const poller = new StreamPoller(
        source,
        table.streamArn,
        host,
        streams,
        sqs,
        { queue: destinationQueue, description: destinationQueue ? undefined : destinationArn },
        region,
        sourceLog,
      );
      pollers.push(poller);
      await poller.start();
    }
  }

  // 7. Schedules (asynchronous invocations with retries and the function's DLQ).
  const scale = options.timeScale ?? 1;
  const scheduler = new Scheduler(
    scheduleDefs.schedules.map((definition) => ({
      definition,
      ruleArn: references.arn(
        'events',
        `rule/${String(template.Resources[definition.ruleLogicalId].Properties?.Name ?? definition.ruleLogicalId)}`,
      ),
    })),
    (functionLogicalId) => {
      const fn = functionDefs.find((f) => f.logicalId === functionLogicalId)!;
      const dlqArn =
        fn.deadLetterTarget === undefined
          ? undefined
          : resolver.resolveString(fn.deadLetterTarget, `${fn.logicalId} DeadLetterConfig`);
      const dlq = dlqArn === undefined ? undefined : queueByArn(dlqArn);
      const host = hostOf(functionLogicalId);
      return {
        host,
        async: {
          retryAttempts: fn.asyncRetryAttempts,
          retryDelaysMs: [60_000 * scale, 120_000 * scale],
          deadLetter: dlq ? { url: dlq.url, sqs } : undefined,
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

  // 8. Alarms on SQS metrics.
  let alarms: AlarmEvaluator | undefined;
  if (alarmDefs.alarms.length > 0 && sqsEmulator !== undefined) {
    const fauxqsEndpoint = sqsEmulator.endpoint;
    alarms = new AlarmEvaluator(
      alarmDefs.alarms.map((definition) => ({
        definition,
        queueName: queues.get(definition.queueLogicalId)!.name,
        actions: definition.actions.map((a) => resolver.resolveString(a, `${definition.logicalId} AlarmActions`)),
      })),
      (queueName) => fauxqsQueueMetrics(fauxqsEndpoint, queueName),
      (line) => log('alarm', line),
      options.alarmIntervalMs,
    );
    alarms.start();
    const evaluator = alarms;
    stoppers.push(() => evaluator.stop());
  }

  const stats = (): RuntimeStats => ({
    dynamodbWrites: dynamoProxy?.counts.writeUnits ?? 0,
    dynamodbReads: dynamoProxy?.counts.readUnits ?? 0,
    dynamodbCalls: dynamoProxy?.counts.total ?? 0,
    dynamodbByTable: Object.fromEntries(
      Object.entries(dynamoProxy?.counts.byTable ?? {}).map(([table, units]) => [table, { ...units }]),
    ),
    sqs: sqsProxy?.counts.total ?? 0,
    lambdaInvocations: [...hosts.values()].reduce((n, h) => n + h.stats.invocations, 0),
    byOperation: { dynamodb: { ...dynamoProxy?.counts.byOperation }, sqs: { ...sqsProxy?.counts.byOperation } },
    metrics: metrics.snapshot(),
    functions: Object.fromEntries(
      [...hosts.values()].map((h) => [h.fn.displayName, { crashes: h.stats.crashes, ...h.deliveries.counts }]),
    ),
  });

  // 9. The REST API.
  let apiUrl: string | undefined;
  let stageUrl: string | undefined;
  if (apis.length > 0) {
    const api = apis[0];
    const server = new ApiServer({
      api,
      apiId: references.ref(api.logicalId)!,
      hostOf,
      port: options.port,
      log: (line) => log('api', line),
      localRoutes: {
        '/__local/stats': stats,
        // Every order's hops (the proof kit draws the slowest as a waterfall): ?since=<epoch ms>.
        '/__local/spans': (url) => spans.since(Number(url.searchParams.get('since') ?? 0) || 0),
      },
    });
    await server.start();
    stoppers.push(() => server.stop());
    apiUrl = server.url;
    stageUrl = `${apiUrl}/${api.stageName ?? 'prod'}/`;
  }

  const outputs: LocalOutputs = {
    stackName: stack.stackName,
    region,
    apiUrl,
    stageUrl,
    tables: Object.fromEntries([...tables].map(([id, t]) => [id, t.name])),
    tableStreamArns: Object.fromEntries(
      [...tables].filter(([, t]) => t.streamArn).map(([id, t]) => [id, t.streamArn!]),
    ),
    queues: Object.fromEntries([...queues].map(([id, q]) => [id, q.name])),
    queueUrls: Object.fromEntries([...queues].map(([id, q]) => [id, q.url])),
    functions: Object.fromEntries(functionDefs.map((f) => [f.logicalId, f.functionName])),
    endpoints: { dynamodb: dynamo?.endpoint, sqs: sqsEmulator?.endpoint },
    stackOutputs: {
      ...resolveStackOutputs(stack, resolver, stageUrl),
      // Local only: where the proof kit reads what the providers performed (GET /__log).
      // and where its API key is (a path: the proof kit's chaos and key-window faults need the key).
      ...(provider !== undefined ? { LocalProviderUrl: provider.url, LocalProviderApiKeyFile: providerKeyFile! } : {}),
    },
  };
  if (options.outputsFile !== undefined) {
    const file = options.outputsFile;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, `${JSON.stringify(outputs, null, 2)}\n`);
    // Removed first on stop: a file left behind would send the tools to endpoints nobody answers.
    stoppers.push(async () => fs.rmSync(file, { force: true }));
  }

  return {
    outputs,
    hosts,
    queues,
    tables,
    inventory,
    inventorySummary: summary,
    alarms,
    stats,
    pids: () => [
      ...emulators.map((e) => e.process.pid).filter((pid): pid is number => pid !== undefined),
      ...[...hosts.values()].flatMap((h) => h.pids()),
    ],
    stop,
  };
}

/** The stack's outputs with local values; an execute-api URL becomes the local stage URL. */
function resolveStackOutputs(
  stack: StackArtifact,
  resolver: IntrinsicResolver,
  stageUrl: string | undefined,
): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, output] of Object.entries(stack.template.Outputs ?? {})) {
    try {
      const value = resolver.resolveString(output.Value, `output ${name}`);
      result[name] =
        stageUrl !== undefined && /^https:\/\/[^/]+\.execute-api\.[^/]+\/[^/]+\/$/.test(value) ? stageUrl : value;
    } catch {
      // An output that means nothing locally is left out rather than invented.
    }
  }
  return result;
}
