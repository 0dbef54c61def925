import type { APIGatewayProxyEvent } from 'aws-lambda';
import { logger } from '../runtime/observability';
import { inSpan } from '../trace/spans';
import { formatTraceparent, parseTraceparent } from '../trace/trace-context';
import { headerValues } from './http';

/**
 * Runs one API request in the `api` span of its trace: a child of the caller's `traceparent` header
 * when it is one valid value, a new trace otherwise (a missing, malformed or repeated header is
 * ignored, never refused). While it runs, every log line carries the span's `traceparent`, and an
 * event written to the outbox (`outboxPut`) carries the trace on to the relay, the consumers and
 * their provider calls.
 *
 * @example A command handler that writes an outbox event
 * ```ts
 * import { inRequestSpan } from '.';
 *
 * export const handler = (event: APIGatewayProxyEvent, context: Context) =>
 *   inRequestSpan(event, 'POST /orders/{orderId}/cancel', () => cancel(event, context));
 * ```
 */
export function inRequestSpan<T>(event: APIGatewayProxyEvent, route: string, work: () => Promise<T>): Promise<T> {
  const given = headerValues(event, 'traceparent');
  const parent = given?.length === 1 ? parseTraceparent(given[0]) : undefined;
  return inSpan(
    'api',
    parent,
    async (span) => {
      // One request per invocation: the key is the request's, and removed before the next one.
      logger.appendKeys({ traceparent: formatTraceparent(span) });
      try {
        return await work();
      } finally {
        logger.removeKeys(['traceparent']);
      }
    },
    { route },
  );
}
