#!/usr/bin/env node
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { ConfigError, readConfig, stackPropsFor, type AppConfig } from '../lib/config';
import { applicationStack } from '../lib/app-stack';

const app = new App();
let config: AppConfig;
let stackProps: ReturnType<typeof stackPropsFor>;
try {
  config = readConfig(app);
  // The stage's pinned account and region (refused when the deployer's credentials point elsewhere), and
  // prod's termination protection: its tables and DLQs hold what a person must look at.
  stackProps = stackPropsFor(config);
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  // A bad option is the deployer's to fix: one line saying which and why, no stack trace.
  console.error(error.message);
  process.exit(1);
}
// One stack per stage (`-c stage=dev|prod`): `ExactlyOnce-dev`, `ExactlyOnce-prod`.
applicationStack(app, config.stackName, {
  config,
  ...stackProps,
  description: `Exactly-once effects over at-least-once delivery (reference implementation), stage ${config.stage}`,
});
// Findings fail synth; each acknowledgement in lib/ carries its reason.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
