import { getParameter } from '@aws-lambda-powertools/parameters/ssm';

/** An SSM parameter holding JSON, parsed; Powertools keeps it for `maxAgeSeconds` before reading SSM again. */
export function readJsonParameter(name: string, maxAgeSeconds: number): Promise<unknown> {
  return getParameter(name, { transform: 'json', maxAge: maxAgeSeconds });
}
