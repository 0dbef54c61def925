import { Tags, type Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import type { AppConfig } from './config';
// The example's stack: the one line `npm run new:domain <name>` rewrites (a hand-made domain edits it likewise).
import { ExactlyOnceStack } from './shop/shop-stack';

/** The `project` tag on every resource of the stack (with `stage`): what Cost Explorer groups by. */
export const PROJECT_TAG = 'exactly-once-effects';

/**
 * The application's stack for one stage, under a name that stays when the example is replaced: bin/app.ts
 * deploys it and the checks every application keeps build it (test/support/synth.ts), so a fork with
 * another domain keeps them. The domain's stack is built here and tagged for cost allocation (`project`,
 * `stage`: a load test's bill, or one stage's, can be told apart once the tags are activated in Billing).
 */
export function applicationStack(scope: Construct, id: string, props: StackProps & { config: AppConfig }): Stack {
  const stack = new ExactlyOnceStack(scope, id, props);
  Tags.of(stack).add('project', PROJECT_TAG);
  Tags.of(stack).add('stage', props.config.stage);
  return stack;
}
