import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { readConfig } from '../../lib/config';
import type { Stack } from 'aws-cdk-lib';
import { applicationStack } from '../../lib/app-stack';
import { cdkContext } from './cdk-app';

/**
 * The application's stack (lib/app-stack.ts, the example's today), synthesized as bin/app.ts builds it,
 * for the checks every application keeps (they hold for whatever domain replaces the example) and the
 * example's own stack tests. The mechanism's infra tests build the neutral probe stack instead
 * (test/exactly-once/fixtures/probe-stack.ts); the CDK helpers both use are in ./cdk-app.
 */
export { cdkContext, synthErrors, type SynthFinding } from './cdk-app';
export { configError } from './config-error';

export function synthStack(context: Record<string, unknown> = {}): {
  app: App;
  stack: Stack;
  template: Template;
} {
  const app = new App({ context: cdkContext(context) });
  const stack = applicationStack(app, 'TestStack', { config: readConfig(app) });
  return { app, stack, template: Template.fromStack(stack) };
}

let defaultTemplate: Record<string, unknown> | undefined;

/** The default stack's template as JSON, synthesized once per test file (tables and queues are built from it). */
export function defaultStackTemplate(): Record<string, unknown> {
  defaultTemplate ??= synthStack().template.toJSON();
  return defaultTemplate;
}
