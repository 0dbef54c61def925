import * as fs from 'node:fs';
import * as path from 'node:path';
import type { AlarmEvaluator } from './alarms';
import { ApiServer } from './api/server';
import type { Emulator } from './emulators';
import type { FunctionHost } from './host/function-host';
import { createQueues, createTables, type LocalTable } from './provision';
import type { LocalQueue } from './sources/sqs-poller';
import {
  createHosts,
  readTemplate,
  runtimeStats,
  startAlarms,
  startEmulators,
  startEventSources,
  startLocalProvider,
  startSchedules,
  type Emulated,
  type LocalProviderSetup,
  type Stoppers,
  type Wiring,
} from './start-steps';
import type { FunctionDefinition } from './template/lambda';
import { readCloudAssembly, selectStack, type StackArtifact } from './template/cloud-assembly';
import { IntrinsicResolver } from './template/intrinsics';
import { LocalReferences } from './template/references';
import type { RuntimeOptions, RuntimeStats } from './runtime-options';

export type { RuntimeOptions, RuntimeStats };

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
  const stoppers: Stoppers = [];
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
  stoppers: Stoppers,
  emulators: Emulator[],
  stop: () => Promise<void>,
): Promise<LocalRuntime> {
  const { template, region } = stack;
  const log = options.log;

  // 1. Read the template (fails fast, before anything is started).
  const defs = readTemplate(stack);
  const { functionDefs, apis } = defs;

  // 2. Emulators, only those the template needs, in parallel.
  const needs = { dynamodb: defs.tableDefs.length > 0, sqs: defs.queueDefs.length > 0 };
  const emulated = await startEmulators(region, needs, stoppers, emulators);

  // 3. Resources, registered for Ref / Fn::GetAtt.
  const references = new LocalReferences(template, region, stack.stackName);
  const queues = await createQueues(emulated.sqs, defs.queueDefs, references);
  const tables = await createTables(emulated.dynamodb, defs.tableDefs, references);
  const lambdaArn = (name: string) => references.arn('lambda', `function:${name}`);
  for (const fn of functionDefs)
    references.register(fn.logicalId, fn.functionName, { Arn: lambdaArn(fn.functionName) });
  apis.forEach((api, i) => references.register(api.logicalId, `local${i || ''}api`, { RootResourceId: 'root' }));
  const resolver = new IntrinsicResolver(template, references, references.pseudoParameters());
  const queueByArn = (arn: string) => [...queues.values()].find((q) => q.arn === arn);

  // 4. The local provider, when a function consumes.
  const local = await startLocalProvider(options, functionDefs, stoppers);

  // 5. Function hosts with the template environment resolved.
  const functions = { defs: functionDefs, arnOf: lambdaArn };
  const hosts = createHosts(options, region, functions, resolver, emulated, local.environment, stoppers);
  const wiring: Wiring = { region, log, emulated, hosts, queues, tables, resolver, queueByArn };

  // 6. Event sources, 7. schedules, 8. alarms.
  await startEventSources(defs.sourceDefs.sources, wiring, stoppers);
  const schedules = { schedules: defs.scheduleDefs.schedules, functions: functionDefs };
  startSchedules(stack, schedules, references, wiring, options.timeScale, stoppers);
  const alarms = startAlarms(defs.alarmDefs.alarms, wiring, options.alarmIntervalMs, stoppers);
  const stats = () => runtimeStats(emulated, hosts);

  // 9. The REST API.
  let apiUrl: string | undefined;
  let stageUrl: string | undefined;
  if (apis.length > 0) {
    const api = apis[0];
    const server = new ApiServer({
      api,
      apiId: references.ref(api.logicalId)!,
      hostOf: hosts.hostOf,
      port: options.port,
      log: (line) => log('api', line),
      localRoutes: {
        '/__local/stats': stats,
        // Every order's hops (the proof kit draws the slowest as a waterfall): ?since=<epoch ms>.
        '/__local/spans': (url) => hosts.spans.since(Number(url.searchParams.get('since') ?? 0) || 0),
      },
    });
    await server.start();
    stoppers.push(() => server.stop());
    apiUrl = server.url;
    stageUrl = `${apiUrl}/${api.stageName ?? 'prod'}/`;
  }

  const outputs = localOutputs(
    stack,
    { apiUrl, stageUrl },
    { tables, queues, functionDefs },
    emulated,
    resolver,
    local,
  );
  if (options.outputsFile !== undefined) writeOutputsFile(options.outputsFile, outputs, stoppers);

  return {
    outputs,
    hosts: hosts.hosts,
    queues,
    tables,
    inventory: defs.inventory,
    inventorySummary: defs.summary,
    alarms,
    stats,
    pids: () => [
      ...emulators.map((e) => e.process.pid).filter((pid): pid is number => pid !== undefined),
      ...[...hosts.hosts.values()].flatMap((h) => h.pids()),
    ],
    stop,
  };
}

/** What the tools find the runtime by: its resources' local names and URLs, and the stack's outputs resolved. */
function localOutputs(
  stack: StackArtifact,
  { apiUrl, stageUrl }: { apiUrl?: string; stageUrl?: string },
  { tables, queues, functionDefs }: Pick<LocalRuntime, 'tables' | 'queues'> & { functionDefs: FunctionDefinition[] },
  emulated: Pick<Emulated, 'dynamo' | 'sqsEmulator'>,
  resolver: IntrinsicResolver,
  local: LocalProviderSetup,
): LocalOutputs {
  return {
    stackName: stack.stackName,
    region: stack.region,
    apiUrl,
    stageUrl,
    tables: Object.fromEntries([...tables].map(([id, t]) => [id, t.name])),
    tableStreamArns: Object.fromEntries(
      [...tables].filter(([, t]) => t.streamArn).map(([id, t]) => [id, t.streamArn!]),
    ),
    queues: Object.fromEntries([...queues].map(([id, q]) => [id, q.name])),
    queueUrls: Object.fromEntries([...queues].map(([id, q]) => [id, q.url])),
    functions: Object.fromEntries(functionDefs.map((f) => [f.logicalId, f.functionName])),
    endpoints: { dynamodb: emulated.dynamo?.endpoint, sqs: emulated.sqsEmulator?.endpoint },
    stackOutputs: {
      ...resolveStackOutputs(stack, resolver, stageUrl),
      // Local only: where the proof kit reads what the providers performed (GET /__log).
      // and where its API key is (a path: the proof kit's chaos and key-window faults need the key).
      ...(local.provider !== undefined
        ? { LocalProviderUrl: local.provider.url, LocalProviderApiKeyFile: local.keyFile! }
        : {}),
    },
  };
}

/** The outputs file the tools find the runtime by; removed first on stop. */
function writeOutputsFile(file: string, outputs: LocalOutputs, stoppers: Stoppers): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(outputs, null, 2)}\n`);
  // Removed first on stop: a file left behind would send the tools to endpoints nobody answers.
  stoppers.push(async () => fs.rmSync(file, { force: true }));
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
