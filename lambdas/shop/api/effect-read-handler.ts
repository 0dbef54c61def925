import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import {
  callerOf,
  FORBIDDEN,
  json,
  notFound,
  problem,
  type CallerRule,
  type HttpResponse,
} from '@exactly-once/runtime/api';
import { dynamoDbDocumentClient } from '@exactly-once/runtime/aws';
import { ENV, logger, requireEnv } from '@exactly-once/runtime/runtime';
import { DynamoDbEffectsReader } from '../aws/ledgers';
import type { EffectsReader } from '../ports/ledgers';
import { shopErrorResponse } from './order-request';

/** The consumers' effects, for the effect GETs' deployed parts (read at cold start, by their `partsFromEnv`). */
export function effectsReaderFromEnv(): DynamoDbEffectsReader {
  return new DynamoDbEffectsReader(dynamoDbDocumentClient(), requireEnv(ENV.effectsTable));
}

/**
 * Who may read: `shared` is a read model every caller sees alike (stock);
 * `caller` is the caller's own data: the caller, under the rule, is derived
 * first (403 without one) and `read` must scope to it.
 */
export type EffectReadScope<Read> =
  | { scope: 'shared'; read: (reader: EffectsReader, id: string) => Read }
  | { scope: 'caller'; callerRule: CallerRule; read: (reader: EffectsReader, id: string, caller: string) => Read };

/**
 * A GET on one consumer effect (points of a customer, reserved stock of a SKU):
 * the caller when the read is scoped to it, then the path parameter, then the
 * read; 200 with the value or 404. `reader` is given, never built here, so an
 * entry module can build this handler without touching the environment.
 */
export function effectReadHandler(
  options: {
    reader: EffectsReader;
    parameter: string;
    maxLength: number;
    /** The characters an id can have, when narrower than any (checked before any read). */
    allowed?: { pattern: RegExp; description: string };
    title: string;
    body: (id: string, value: number) => Record<string, unknown>;
    missing: (id: string) => string;
  } & EffectReadScope<Promise<number | undefined>>,
): (event: APIGatewayProxyEvent, context: Context) => Promise<HttpResponse> {
  const { reader } = options;
  return async (event, context) => {
    logger.addContext(context);
    let read: (id: string) => Promise<number | undefined>;
    if (options.scope === 'caller') {
      const caller = callerOf(event, options.callerRule);
      if (caller === undefined) return FORBIDDEN;
      read = (id) => options.read(reader, id, caller);
    } else {
      read = (id) => options.read(reader, id);
    }
    const id = event.pathParameters?.[options.parameter];
    if (
      id === undefined ||
      id.length === 0 ||
      id.length > options.maxLength ||
      (options.allowed !== undefined && !options.allowed.pattern.test(id))
    ) {
      const characters = options.allowed === undefined ? '' : ` of ${options.allowed.description}`;
      return problem({
        status: 400,
        title: options.title,
        detail: `${options.parameter} must be 1 to ${options.maxLength} characters${characters}.`,
      });
    }
    try {
      const value = await read(id);
      return value === undefined ? notFound(options.missing(id)) : json(200, options.body(id, value));
    } catch (error) {
      return shopErrorResponse(error);
    }
  };
}
