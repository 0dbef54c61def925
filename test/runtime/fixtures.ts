import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Logger } from '@exactly-once/tools/local-runtime/log';
import { startRuntime, type LocalRuntime, type RuntimeOptions } from '@exactly-once/tools/local-runtime/runtime';
import { synthesize } from '@exactly-once/tools/local-runtime/template/cloud-assembly';
import { PROBE_APP, SHARED_CDK_OUT_ENV, SHARED_PROBE_CDK_OUT_ENV } from '../support/runtime-setup';
import { exampleDomain } from '../support/example-domain';
import { tooling as probeTooling } from '../support/probe-tooling';
import type { CfnResource } from '@exactly-once/tools/local-runtime/template/model';

/**
 * Hand-made cloud assemblies for the runtime's tests: a manifest, an asset
 * manifest and a template, with each function's code written as a tiny
 * handler file, exactly where `cdk synth` would put a bundled asset.
 */
export interface FixtureFunction {
  /** The body of index.js. */
  code: string;
  environment?: Record<string, unknown>;
  timeout?: number;
  reservedConcurrency?: number;
  properties?: Record<string, unknown>;
}

export function writeAssembly(options: {
  stackName?: string;
  resources: Record<string, CfnResource>;
  functions: Record<string, FixtureFunction>;
  outputs?: Record<string, { Value: unknown }>;
}): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'runtime-fixture-'));
  const stackName = options.stackName ?? 'FixtureStack';
  const files: Record<string, unknown> = {};
  const resources: Record<string, CfnResource> = { ...options.resources };
  for (const [logicalId, fn] of Object.entries(options.functions)) {
    const hash = `${logicalId.toLowerCase()}0000`;
    const assetDir = `asset.${hash}`;
    fs.mkdirSync(path.join(dir, assetDir));
    fs.writeFileSync(path.join(dir, assetDir, 'index.js'), fn.code);
    files[hash] = {
      source: { path: assetDir, packaging: 'zip' },
      destinations: { d: { bucketName: 'b', objectKey: `${hash}.zip` } },
    };
    resources[logicalId] = {
      Type: 'AWS::Lambda::Function',
      Properties: {
        Code: { S3Bucket: 'b', S3Key: `${hash}.zip` },
        Handler: 'index.handler',
        Runtime: 'nodejs24.x',
        Timeout: fn.timeout ?? 5,
        Environment: { Variables: fn.environment ?? {} },
        ...(fn.reservedConcurrency !== undefined ? { ReservedConcurrentExecutions: fn.reservedConcurrency } : {}),
        ...fn.properties,
      },
      Metadata: { 'aws:cdk:path': `${stackName}/${logicalId}/Resource` },
    };
  }
  fs.writeFileSync(path.join(dir, `${stackName}.assets.json`), JSON.stringify({ version: '55.0.0', files }));
  fs.writeFileSync(
    path.join(dir, `${stackName}.template.json`),
    JSON.stringify({ Resources: resources, Outputs: options.outputs }),
  );
  fs.writeFileSync(
    path.join(dir, 'manifest.json'),
    JSON.stringify({
      version: '55.0.0',
      artifacts: {
        [`${stackName}.assets`]: { type: 'cdk:asset-manifest', properties: { file: `${stackName}.assets.json` } },
        [stackName]: {
          type: 'aws:cloudformation:stack',
          environment: 'aws://unknown-account/us-east-1',
          properties: { templateFile: `${stackName}.template.json` },
          dependencies: [`${stackName}.assets`],
          displayName: stackName,
        },
      },
    }),
  );
  return dir;
}

/**
 * Handler prelude: `record(entry)` appends one JSON line to RECORD_FILE, so
 * a test can see what every invocation (in its own process) received.
 */
export const RECORDER = `
const fs = require('node:fs');
const record = (entry) => fs.appendFileSync(process.env.RECORD_FILE, JSON.stringify({ pid: process.pid, at: Date.now(), ...entry }) + '\\n');
`;

export function recordFile(): string {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'runtime-record-')), 'record.jsonl');
  fs.writeFileSync(file, '');
  return file;
}

export function readRecords<T = Record<string, unknown>>(file: string): T[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as T);
}

/** Polls until `check` returns a value other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 15_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The real stack as `npm start` runs it: `cdk synth` with bundling into
 * `<work>/cdk.out` (a fresh folder unless given; a copy of the runtime project's one synthesis,
 * test/support/runtime-setup.ts, when jest made it), then the runtime on the
 * synthesized template, its API on a free port, its log captured and dropped
 * unless `log` is given. The runtime serves the example's domain (its consumers' providers).
 */
export async function startSynthesizedStack(
  options: Partial<Omit<RuntimeOptions, 'cdkOut'>> & { work?: string } = {},
): Promise<LocalRuntime> {
  const { work = fs.mkdtempSync(path.join(os.tmpdir(), 'stack-')), ...runtimeOptions } = options;
  const cdkOut = path.join(work, 'cdk.out');
  const shared = process.env[SHARED_CDK_OUT_ENV];
  if (shared !== undefined) fs.cpSync(shared, cdkOut, { recursive: true });
  else await synthesize(path.resolve(__dirname, '..', '..'), cdkOut);
  return startRuntime({ cdkOut, domain: exampleDomain(), port: 0, log: capturingLogger().log, ...runtimeOptions });
}

/**
 * The probe app (test/support/probe-app.ts: the neutral fixture's stack, built as the local runtime
 * runs it) on the local runtime, as startSynthesizedStack runs the example's: a copy of the runtime
 * project's one synthesis of it, or its own `cdk synth --app` outside jest's runtime project. The
 * runtime is handed the probe tooling (test/support/probe-tooling.ts) as its domain; the test hands it
 * to the engines it drives too (proof-kit-fixture.ts: the target carries it).
 */
export async function startProbeStack(
  options: Partial<Omit<RuntimeOptions, 'cdkOut'>> & { work?: string } = {},
): Promise<LocalRuntime> {
  const { work = fs.mkdtempSync(path.join(os.tmpdir(), 'probe-stack-')), ...runtimeOptions } = options;
  const cdkOut = path.join(work, 'cdk.out');
  const shared = process.env[SHARED_PROBE_CDK_OUT_ENV];
  if (shared !== undefined) fs.cpSync(shared, cdkOut, { recursive: true });
  else await synthesize(path.resolve(__dirname, '..', '..'), cdkOut, undefined, { app: PROBE_APP });
  return startRuntime({ cdkOut, domain: probeTooling, port: 0, log: capturingLogger().log, ...runtimeOptions });
}

/** A logger that keeps every line, for assertions on what the runtime prints. */
export function capturingLogger(): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  return { lines, log: (source, line) => lines.push(`[${source}] ${line}`) };
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The domain of a hand-made assembly: no consumer, so no provider for the runtime to serve. */
export const NO_DOMAIN: RuntimeOptions['domain'] = { consumers: [] };
