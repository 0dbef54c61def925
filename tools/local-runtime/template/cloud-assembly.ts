import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { TemplateError, type CfnTemplate } from './model';

/**
 * Reads what `cdk synth` wrote: the cloud assembly manifest, each stack's
 * template, and its asset manifest (where each Lambda code asset was bundled).
 */
export interface StackArtifact {
  stackName: string;
  region: string;
  template: CfnTemplate;
  /** Absolute folder of every file asset, by the S3 object key a template refers to it with. */
  assetsByObjectKey: Map<string, string>;
  /** Absolute folder of every file asset, by asset hash. */
  assetsByHash: Map<string, string>;
}

interface Manifest {
  artifacts?: Record<
    string,
    {
      type: string;
      environment?: string;
      properties?: Record<string, unknown>;
      dependencies?: string[];
      displayName?: string;
    }
  >;
}

interface AssetManifest {
  files?: Record<
    string,
    { source: { path: string; packaging?: string }; destinations: Record<string, { objectKey: string }> }
  >;
}

export function readCloudAssembly(outdir: string): StackArtifact[] {
  const manifestPath = path.join(outdir, 'manifest.json');
  if (!fs.existsSync(manifestPath)) throw new TemplateError(`No cloud assembly in ${outdir}: run cdk synth first`);
  const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8')) as Manifest;
  const artifacts = manifest.artifacts ?? {};
  return Object.entries(artifacts)
    .filter(([, a]) => a.type === 'aws:cloudformation:stack')
    .map(([id, artifact]) => {
      const templateFile = String(artifact.properties?.templateFile);
      const template = JSON.parse(fs.readFileSync(path.join(outdir, templateFile), 'utf8')) as CfnTemplate;
      const assetsByObjectKey = new Map<string, string>();
      const assetsByHash = new Map<string, string>();
      for (const dependency of artifact.dependencies ?? []) {
        const dep = artifacts[dependency];
        if (dep?.type !== 'cdk:asset-manifest') continue;
        const assets = JSON.parse(
          fs.readFileSync(path.join(outdir, String(dep.properties?.file)), 'utf8'),
        ) as AssetManifest;
        for (const [hash, file] of Object.entries(assets.files ?? {})) {
          const folder = path.resolve(outdir, file.source.path);
          assetsByHash.set(hash, folder);
          for (const destination of Object.values(file.destinations))
            assetsByObjectKey.set(destination.objectKey, folder);
        }
      }
      // environment is aws://<account>/<region>; an environment-agnostic stack says unknown-region.
      const region = /^aws:\/\/[^/]+\/(.+)$/.exec(artifact.environment ?? '')?.[1];
      return {
        stackName: artifact.displayName ?? id,
        region: region === undefined || region.startsWith('unknown') ? 'us-east-1' : region,
        template,
        assetsByObjectKey,
        assetsByHash,
      };
    });
}

/** Picks the stack to run: the only one, or the one named by `wanted`. */
export function selectStack(stacks: StackArtifact[], wanted?: string): StackArtifact {
  if (wanted !== undefined) {
    const found = stacks.find((s) => s.stackName === wanted);
    if (found === undefined)
      throw new TemplateError(
        `Stack ${wanted} is not in the cloud assembly (found: ${stacks.map((s) => s.stackName).join(', ')})`,
      );
    return found;
  }
  if (stacks.length !== 1) {
    throw new TemplateError(
      `The cloud assembly has ${stacks.length} stacks (${stacks.map((s) => s.stackName).join(', ')}); set STACK to pick one`,
    );
  }
  return stacks[0];
}

/** What else `synthesize` may be told. */
export interface SynthesizeOptions {
  /**
   * The CDK app to synthesize, as `cdk synth --app` takes it (a command, e.g. `npx tsx <entry>.ts`).
   * @default the app cdk.json names (the example's)
   */
  app?: string;
}

/**
 * Runs `cdk synth` with bundling, as a deploy would, so the runtime runs the
 * same code and wiring, plus the local runtime's build (`-c localRuntime=true`):
 * fault injection on, and the proof kit's test-only inbox bypass, which no
 * deployable build has (its template refuses to deploy). Its output is shown only when it fails.
 * cdk.json's context (the feature flags) applies to `options.app` too.
 */
export function synthesize(
  projectDir: string,
  outdir: string,
  signal?: AbortSignal,
  options: SynthesizeOptions = {},
): Promise<void> {
  const app = options.app === undefined ? [] : ['--app', options.app];
  return new Promise((resolve, reject) => {
    const args = ['cdk', 'synth', '--quiet', ...app, '--output', outdir, '--context', 'localRuntime=true'];
    const child = spawn('npx', args, {
      cwd: projectDir,
      env: { ...process.env, CDK_DISABLE_CLI_TELEMETRY: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
      signal,
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', (error) =>
      reject(
        new TemplateError(
          signal?.aborted ? 'cdk synth was interrupted' : `cdk synth could not start: ${error.message}`,
        ),
      ),
    );
    child.on('exit', (code, signal) => {
      if (code === 0) resolve();
      else reject(new TemplateError(`cdk synth failed (${signal ?? `exit ${code}`}):\n${output.trim()}`));
    });
  });
}
