import { App } from 'aws-cdk-lib';
import { readConfig } from '../../lib/config';

/**
 * readConfig's one-line error for a context, or undefined when it accepts it. Apart from cdk-app.ts,
 * which the mechanism's own tests import: they run in a copy without the application's lib/config.ts.
 */
export function configError(context: Record<string, unknown>): string | undefined {
  try {
    readConfig(new App({ context }));
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}
