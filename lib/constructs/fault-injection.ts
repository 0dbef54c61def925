import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as ssm from 'aws-cdk-lib/aws-ssm';
import { Construct } from 'constructs';

/**
 * The proof kit's fault-injection switch on AWS: an SSM parameter holding the
 * run's fault plan as JSON (see lambdas/domain/faults.ts). It is `{}` (no
 * faults) as deployed; `npm run loadtest -- --stack NAME --faults ...` sets it
 * for a run and puts `{}` back afterwards. Functions re-read it every few seconds.
 * The stack creates it only when fault injection is on, which the
 * configuration never allows in prod: one PutParameter on it could switch a
 * safeguard off with no deploy.
 */
export class FaultInjectionSwitch extends Construct {
  readonly parameter: ssm.StringParameter;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.parameter = new ssm.StringParameter(this, 'Plan', {
      description: 'Fault plan for load tests (JSON). {} = no faults. Never enable on a system whose numbers matter.',
      stringValue: '{}',
    });
  }

  /** Lets a function read the switch and tells it where the switch is. */
  attach(fn: lambda.Function): void {
    fn.addEnvironment('FAULT_PARAMETER_NAME', this.parameter.parameterName);
    this.parameter.grantRead(fn);
  }
}
