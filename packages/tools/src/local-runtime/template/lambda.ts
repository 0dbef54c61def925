import * as fs from 'node:fs';
import * as path from 'node:path';
import { functionsNamedBy, templateLookup } from '@exactly-once/cdk/template';
import type { StackArtifact } from './cloud-assembly';
import { displayName, numberProperty, resourcesOfType, TemplateError, type CfnTemplate } from './model';

/** An AWS::Lambda::Function as the function host runs it. */
export interface FunctionDefinition {
  logicalId: string;
  /** What `Ref` returns and AWS_LAMBDA_FUNCTION_NAME says. */
  functionName: string;
  /** Short construct path for log prefixes, e.g. `OrdersApi/CreateOrder`. */
  displayName: string;
  /** Folder holding the bundled code (the asset `cdk synth` produced). */
  codeDir: string;
  /** `file.export`, as in the template. */
  handler: string;
  runtime: string;
  timeoutSeconds: number;
  memoryMb: number;
  /** Unresolved: intrinsics are resolved once local resources exist. */
  environment: Record<string, unknown>;
  reservedConcurrency?: number;
  logFormat?: string;
  /** Async invocations (schedules): retries and dead-letter target from EventInvokeConfig / DeadLetterConfig. */
  asyncRetryAttempts: number;
  deadLetterTarget?: unknown;
}

/**
 * Reads every Node.js AWS::Lambda::Function whose code is an asset of the
 * cloud assembly. Other runtimes and inline code are refused with a clear
 * message rather than half run.
 */
export function functionDefinitions(stack: StackArtifact): FunctionDefinition[] {
  const { template } = stack;
  const invokeConfigs = asyncInvokeConfigs(template);
  return resourcesOfType(template, 'AWS::Lambda::Function').map(([logicalId, resource]) => {
    const p = resource.Properties ?? {};
    const runtime = String(p.Runtime ?? '');
    if (!runtime.startsWith('nodejs')) {
      throw new TemplateError(
        `Function ${logicalId}: runtime ${runtime || '(container image)'} cannot be hosted locally (Node.js only)`,
      );
    }
    const env = (p.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};
    const logging = p.LoggingConfig as { LogFormat?: string } | undefined;
    const name = typeof p.FunctionName === 'string' ? p.FunctionName : `${stack.stackName}-${logicalId}`.slice(0, 64);
    return {
      logicalId,
      functionName: name,
      displayName: displayName(logicalId, resource),
      codeDir: codeDirOf(stack, logicalId, p.Code, resource.Metadata),
      handler: String(p.Handler ?? 'index.handler'),
      runtime,
      timeoutSeconds: numberProperty(p, 'Timeout', 3, `Function ${logicalId}`),
      memoryMb: numberProperty(p, 'MemorySize', 128, `Function ${logicalId}`),
      environment: env,
      reservedConcurrency:
        p.ReservedConcurrentExecutions === undefined ? undefined : Number(p.ReservedConcurrentExecutions),
      logFormat: logging?.LogFormat,
      asyncRetryAttempts: invokeConfigs.get(logicalId) ?? 2,
      deadLetterTarget: (p.DeadLetterConfig as { TargetArn?: unknown } | undefined)?.TargetArn,
    };
  });
}

/** Code location: the asset manifest maps the template's S3 key to the bundled folder. */
function codeDirOf(
  stack: StackArtifact,
  logicalId: string,
  code: unknown,
  metadata: Record<string, unknown> | undefined,
): string {
  const key = (code as { S3Key?: unknown } | undefined)?.S3Key;
  let dir = typeof key === 'string' ? stack.assetsByObjectKey.get(key) : undefined;
  if (dir === undefined && typeof key === 'string') dir = stack.assetsByHash.get(key.replace(/\.zip$/, ''));
  if (dir === undefined && typeof metadata?.['aws:asset:path'] === 'string') {
    // Older assemblies: the asset folder is recorded next to the template.
    dir = [...stack.assetsByHash.values()].find((d) => path.basename(d) === metadata['aws:asset:path']);
  }
  if (dir === undefined) {
    const inline = (code as { ZipFile?: unknown } | undefined)?.ZipFile !== undefined;
    throw new TemplateError(
      `Function ${logicalId}: ${inline ? 'inline code (ZipFile)' : 'its code asset'} is not in the cloud assembly`,
    );
  }
  if (!fs.existsSync(dir))
    throw new TemplateError(`Function ${logicalId}: asset folder ${dir} is missing; run cdk synth again`);
  return dir;
}

/** AWS::Lambda::EventInvokeConfig MaximumRetryAttempts, by function logical id. */
function asyncInvokeConfigs(template: CfnTemplate): Map<string, number> {
  const result = new Map<string, number>();
  for (const [, resource] of resourcesOfType(template, 'AWS::Lambda::EventInvokeConfig')) {
    const p = resource.Properties ?? {};
    const fn = functionLogicalIdIn(p.FunctionName, template);
    if (fn !== undefined && p.MaximumRetryAttempts !== undefined) result.set(fn, Number(p.MaximumRetryAttempts));
  }
  return result;
}

/**
 * The function of this template a value names (`Ref Fn`, `Fn::GetAtt [Fn, Arn]`, a Join or Sub around one as in
 * API integration URIs, an alias or version of one), read as the correctness aspects read it; undefined when it
 * names none or several.
 */
export function functionLogicalIdIn(value: unknown, template: CfnTemplate): string | undefined {
  const functions = functionsNamedBy(value, templateLookup(template.Resources));
  return functions.length === 1 ? functions[0] : undefined;
}
