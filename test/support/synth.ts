import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readConfig } from '../../lib/config';
import { ExactlyOnceStack } from '../../lib/exactly-once-stack';

/**
 * The cdk.json context (feature flags included), because `new App()` in a test
 * does not read cdk.json; plus no bundling, which tests of the template do not need.
 */
export function cdkContext(extra: Record<string, unknown> = {}): Record<string, unknown> {
  const cdkJson = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'cdk.json'), 'utf8'));
  return { ...cdkJson.context, 'aws:cdk:bundling-stacks': [], ...extra };
}

export function synthStack(context: Record<string, unknown> = {}): {
  app: App;
  stack: ExactlyOnceStack;
  template: Template;
} {
  const app = new App({ context: cdkContext(context) });
  const stack = new ExactlyOnceStack(app, 'TestStack', { config: readConfig(app) });
  return { app, stack, template: Template.fromStack(stack) };
}

let defaultTemplate: Record<string, unknown> | undefined;

/** The default stack's template as JSON, synthesized once per test file (tables and queues are built from it). */
export function defaultStackTemplate(): Record<string, unknown> {
  defaultTemplate ??= synthStack().template.toJSON();
  return defaultTemplate;
}
