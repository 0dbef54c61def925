import type { GatewayResponseDefinition } from '../template/api';

export interface GatewayError {
  /**
   * API Gateway's gateway response type, e.g. MISSING_AUTHENTICATION_TOKEN: one of the
   * types a template can configure, or DEFAULT_4XX/DEFAULT_5XX for an error that has none.
   */
  type: string;
  status: number;
  message: string;
  validationErrorString?: string;
  /**
   * The `x-amzn-ErrorType` header, when it is not named after the type: an error served by
   * DEFAULT_4XX still says what it was (e.g. IncompleteSignatureException).
   */
  errorType?: string;
}

export interface HttpReply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const DEFAULT_4XX = 'DEFAULT_4XX';
const DEFAULT_5XX = 'DEFAULT_5XX';

/**
 * Renders an error the gateway itself makes (no function involved) the way
 * the deployed API would: the template's GatewayResponse for that type, else
 * its DEFAULT_4XX/5XX, with `$context.error.*` substituted. Without either,
 * a problem+json body (the project's error format) stands in for API
 * Gateway's `{"message": ...}`.
 */
export function renderGatewayError(
  responses: Record<string, GatewayResponseDefinition>,
  error: GatewayError,
  requestId: string,
): HttpReply {
  const response = responses[error.type] ?? responses[error.status >= 500 ? DEFAULT_5XX : DEFAULT_4XX];
  const status = response?.statusCode ?? error.status;
  if (response?.template === undefined) {
    return {
      status,
      headers: {
        'Content-Type': 'application/problem+json',
        ...(response?.headers ?? {}),
        'x-amzn-ErrorType': error.errorType ?? errorTypeHeader(error.type),
      },
      body: JSON.stringify({
        type: 'about:blank',
        title: error.message,
        status,
        detail: error.validationErrorString ?? error.message,
      }),
    };
  }
  const substitutions: Record<string, string> = {
    '$context.error.message': escapeJson(error.message),
    '$context.error.messageString': JSON.stringify(error.message),
    '$context.error.validationErrorString': escapeJson(error.validationErrorString ?? ''),
    '$context.error.responseType': error.type,
    '$context.requestId': requestId,
  };
  let body = response.template;
  // Longest names first: `$context.error.message` is a prefix of `$context.error.messageString`.
  const ordered = Object.entries(substitutions).sort(([a], [b]) => b.length - a.length);
  for (const [variable, value] of ordered) body = body.split(variable).join(value);
  return {
    status,
    headers: {
      'Content-Type': 'application/json',
      ...response.headers,
      'x-amzn-ErrorType': error.errorType ?? errorTypeHeader(error.type),
    },
    body,
  };
}

function escapeJson(text: string): string {
  return JSON.stringify(text).slice(1, -1);
}

function errorTypeHeader(type: string): string {
  return (
    type
      .toLowerCase()
      .split('_')
      .map((w) => w[0].toUpperCase() + w.slice(1))
      .join('') + 'Exception'
  );
}
