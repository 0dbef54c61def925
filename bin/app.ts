#!/usr/bin/env node
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { readConfig } from '../lib/config';
import { ExactlyOnceStack } from '../lib/exactly-once-stack';

const app = new App();
new ExactlyOnceStack(app, 'ExactlyOnceStack', {
  config: readConfig(app),
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
  description: 'Exactly-once effects over at-least-once delivery (reference implementation)',
});
// Findings fail synth; each acknowledgement in lib/ carries its reason.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
