import type { Stack } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { ExactlyOnce } from '@exactly-once/cdk/exactly-once';
import type { ConsumerSpec } from '@exactly-once/runtime/consumer-spec';
import { synthStack } from '../support/synth';
import { referencedIds, resourceById, resourcesOfType } from '../support/template';

/**
 * The application's stack (lib/app-stack.ts), read without knowing its domain: the one ExactlyOnce in it,
 * its consumers, and what each function is wired to. The checks every application keeps
 * (application-*.test.ts beside this file) build on these, so they hold for whatever domain the stack
 * has, the example's or the one `npm run new:domain` writes.
 */
export interface ApplicationStack {
  stack: Stack;
  template: Template;
  /** The mechanism's construct in the stack. */
  exactlyOnce: ExactlyOnce;
  /** The consumers ExactlyOnce built pipelines for, in the order of the list. */
  consumers: readonly ConsumerSpec[];
}

/** The application's stack synthesized with `context` (cdk.json's, plus these values), as bin/app.ts builds it. */
export function applicationStack(context: Record<string, unknown> = {}): ApplicationStack {
  const { stack, template } = synthStack(context);
  const found = stack.node.findAll().filter((c): c is ExactlyOnce => c instanceof ExactlyOnce);
  if (found.length !== 1)
    throw new Error(`The application's stack has ${found.length} ExactlyOnce constructs, not one`);
  const [exactlyOnce] = found;
  return { stack, template, exactlyOnce, consumers: exactlyOnce.pipelines.map((p) => p.spec) };
}

/**
 * The logical ids a function is wired to: what its properties name (its environment's tables, queues and
 * parameters, its log group, its dead-letter target) and what its event source mappings name (the queue
 * or stream it reads, the on-failure destination). Pseudo parameters (`AWS::Region`) are left out.
 */
export function wiredTo(template: Template, functionId: string): Set<string> {
  const { Role: _role, Code: _code, ...properties } = resourceById(template, functionId).Properties ?? {};
  const mappings = resourcesOfType(template, 'AWS::Lambda::EventSourceMapping')
    .map(([, mapping]) => mapping.Properties ?? {})
    .filter((mapping) => referencedIds(mapping.FunctionName).includes(functionId))
    .map(({ EventSourceArn, DestinationConfig }) => ({ EventSourceArn, DestinationConfig }));
  return new Set(referencedIds([properties, mappings]).filter((id) => !id.startsWith('AWS::')));
}

/** The values of a function's environment variables that are plain strings (names of parameters, URLs). */
export function literalEnvironment(template: Template, functionId: string): string[] {
  const environment = resourceById(template, functionId).Properties?.Environment as
    { Variables?: Record<string, unknown> } | undefined;
  return Object.values(environment?.Variables ?? {}).filter((v): v is string => typeof v === 'string');
}

/**
 * The `providers` context that configures, for dev, every provider a consumer of the list names: an
 * endpoint on a host named after it and the SSM parameter holding its API key.
 */
export function everyProviderConfigured(consumers: readonly ConsumerSpec[]): {
  dev: Record<string, { endpoint: string; apiKeyParameter: string }>;
} {
  const names = [...new Set(consumers.flatMap((spec) => spec.providers ?? []))];
  return {
    dev: Object.fromEntries(
      names.map((name) => [
        name,
        { endpoint: `https://${name}.example/v1/calls`, apiKeyParameter: `/exactly-once/dev/${name}-api-key` },
      ]),
    ),
  };
}
