import * as logs from 'aws-cdk-lib/aws-logs';

/**
 * The settings every log group of the project starts from (a function's own
 * group, the API's access logs), in one place like queue-defaults.ts. The
 * retention here is only the starting value: the stage's LogRetentionAspect
 * sets the one that is deployed, on ExactlyOnce's log groups and on those of
 * the scopes passed to its `retainLogsOf` (the shop passes its stack).
 *
 * @example An API's access logs, as IamRestApi makes them (packages/cdk/src/iam-rest-api.ts)
 * ```ts
 * import { defaultLogGroupProps } from './parts';
 *
 * const accessLogs = new logs.LogGroup(this, 'AccessLogs', { ...defaultLogGroupProps(), removalPolicy: RemovalPolicy.DESTROY });
 * ```
 */
export function defaultLogGroupProps(): logs.LogGroupProps {
  return { retention: logs.RetentionDays.ONE_MONTH };
}
