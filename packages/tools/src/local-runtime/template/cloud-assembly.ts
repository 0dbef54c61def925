import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AssetManifestArtifact, CloudAssembly } from 'aws-cdk-lib/cx-api';
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

/**
 * Each stack of the cloud assembly in `outdir`, read through aws-cdk-lib's own reader (`CloudAssembly`
 * from `aws-cdk-lib/cx-api`, the one the CDK CLI deploys from): it checks the manifest's schema
 * version against the library that wrote it, and follows each stack's asset manifests, so a change in
 * the assembly's layout reaches the runtime with the library instead of breaking a hand-written parser.
 */
export function readCloudAssembly(outdir: string): StackArtifact[] {
  if (!fs.existsSync(path.join(outdir, 'manifest.json')))
    throw new TemplateError(`No cloud assembly in ${outdir}: run cdk synth first`);
  const assembly = new CloudAssembly(outdir);
  return assembly.stacks.map((stack) => {
    const assetsByObjectKey = new Map<string, string>();
    const assetsByHash = new Map<string, string>();
    for (const dependency of stack.dependencies) {
      if (!AssetManifestArtifact.isAssetManifestArtifact(dependency)) continue;
      const manifestFolder = path.dirname(dependency.file);
      for (const [hash, file] of Object.entries(dependency.contents.files ?? {})) {
        const folder = path.resolve(manifestFolder, file.source.path ?? '');
        assetsByHash.set(hash, folder);
        for (const destination of Object.values(file.destinations))
          assetsByObjectKey.set(destination.objectKey, folder);
      }
    }
    // An environment-agnostic stack's region reads unknown-region: the runtime's clients need a real one.
    const { region } = stack.environment;
    return {
      stackName: stack.displayName,
      region: region.startsWith('unknown') ? 'us-east-1' : region,
      template: stack.template as CfnTemplate,
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
