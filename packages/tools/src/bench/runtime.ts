import * as fs from 'node:fs';
import * as path from 'node:path';
import { localTarget, LOCAL_OUTPUTS_FILE, type Target } from '../proof-kit/target';
import { startRuntime, type LocalOutputs, type LocalRuntime, type RuntimeStats } from '../local-runtime/runtime';
import { readCloudAssembly, selectStack, synthesize } from '../local-runtime/template/cloud-assembly';
import type { CfnTemplate } from '../local-runtime/template/model';
import { PROJECT_DIR } from '@exactly-once/cdk/project-dir';
import type { ExampleTooling } from '../domain';

/**
 * The local runtime the bench measures: a running one (`npm start`, found
 * through its outputs file and answering on its stats route), or one the bench
 * starts itself with the same code `npm start` uses (synth, then startRuntime)
 * and stops at the end. Only a runtime of its own exposes per-function
 * invocations and busy time, which Lambda's duration cost needs.
 */
export interface BenchFunction {
  logicalId: string;
  memoryMb: number;
  invocations: number;
  busyMs: number;
}

export interface BenchRuntime {
  target: Target;
  /** DynamoDB Local's own endpoint (not the runtime's counting proxy). */
  dynamodbEndpoint: string;
  source: 'started by the bench' | 'running (npm start)';
  stats(): Promise<RuntimeStats>;
  /** Per-function counters; undefined for a runtime the bench did not start. */
  functions(): BenchFunction[] | undefined;
  /** The runtime's processes (emulators, function environments); empty when not reachable from here. */
  pids(): number[];
  /** The synthesized template the runtime runs (from cdk.out); undefined when there is none. */
  template: CfnTemplate | undefined;
  /** The runtime's table names by the template's logical ids. */
  tables: Readonly<Record<string, string>>;
  /** One invocation of a function, waited for; undefined for a runtime the bench did not start. */
  invoke?(logicalId: string, event: unknown): Promise<void>;
  /** Bytes of log lines the functions have written so far; undefined when not seen from here. */
  logBytes(): number | undefined;
  stop(): Promise<void>;
}

function readTemplate(cdkOut: string): CfnTemplate | undefined {
  if (!fs.existsSync(path.join(cdkOut, 'manifest.json'))) return undefined;
  return selectStack(readCloudAssembly(cdkOut)).template;
}

const projectDir = PROJECT_DIR;

export async function acquireRuntime(options: {
  /** The domain the stack runs, as the entry point loaded it. */
  domain: ExampleTooling;
  useRunning: boolean;
  synth: boolean;
  log: (line: string) => void;
}): Promise<BenchRuntime> {
  if (options.useRunning) {
    const running = await runningRuntime(options.domain);
    if (running !== undefined) return running;
    options.log('no running runtime answers; starting one');
  }
  const cdkOut = path.resolve(process.env.CDK_OUT ?? path.join(projectDir, 'cdk.out'));
  if (options.synth || !fs.existsSync(path.join(cdkOut, 'manifest.json'))) {
    options.log('cdk synth (with bundling)...');
    await synthesize(projectDir, cdkOut);
  }
  const outputsFile = path.join(projectDir, '.local', 'bench-outputs.json');
  let logBytes = 0;
  const runtime: LocalRuntime = await startRuntime({
    cdkOut,
    domain: options.domain,
    port: 0,
    // The functions' logs would bury the figures: only their size is kept (the idle cost's log ingestion).
    log: (_source, line) => void (logBytes += Buffer.byteLength(line) + 1),
    outputsFile,
    faultInjectionFile: path.join(projectDir, '.local', 'bench-faults-none.json'),
  });
  const target = localTarget({ outputsFile, domain: options.domain });
  return {
    target,
    dynamodbEndpoint: runtime.outputs.endpoints.dynamodb!,
    source: 'started by the bench',
    stats: async () => runtime.stats(),
    functions: () =>
      [...runtime.hosts].map(([logicalId, host]) => ({
        logicalId,
        memoryMb: host.fn.memoryMb,
        invocations: host.stats.invocations,
        busyMs: host.stats.busyMs,
      })),
    pids: () => runtime.pids(),
    template: readTemplate(cdkOut),
    tables: runtime.outputs.tables,
    invoke: async (logicalId, event) => {
      const host = runtime.hosts.get(logicalId);
      if (host === undefined) throw new Error(`bench: no function ${logicalId} in the runtime`);
      const result = await host.invoke(event, 'wait');
      if (!result.ok) throw new Error(`bench: ${logicalId} failed`);
    },
    logBytes: () => logBytes,
    stop: async () => {
      target.close();
      await runtime.stop();
    },
  };
}

async function runningRuntime(domain: ExampleTooling): Promise<BenchRuntime | undefined> {
  if (!fs.existsSync(LOCAL_OUTPUTS_FILE)) return undefined;
  const target = localTarget({ domain });
  const statsUrl = new URL('/__local/stats', target.apiUrl).toString();
  const stats = async () => (await (await fetch(statsUrl)).json()) as RuntimeStats;
  try {
    await stats();
  } catch {
    target.close();
    return undefined;
  }
  const outputs = JSON.parse(fs.readFileSync(LOCAL_OUTPUTS_FILE, 'utf8')) as Pick<LocalOutputs, 'endpoints' | 'tables'>;
  return {
    target,
    dynamodbEndpoint: outputs.endpoints.dynamodb!,
    source: 'running (npm start)',
    stats,
    functions: () => undefined,
    pids: () => [],
    template: readTemplate(path.resolve(process.env.CDK_OUT ?? path.join(projectDir, 'cdk.out'))),
    tables: outputs.tables,
    logBytes: () => undefined,
    stop: async () => target.close(),
  };
}
