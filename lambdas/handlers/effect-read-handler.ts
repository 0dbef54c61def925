import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { dynamoDbDocumentClient } from '../adapters/aws-clients';
import { DynamoDbEffectsReader } from '../adapters/dynamodb-ledgers';
import type { EffectsReader } from '../ports/ledgers';
import { requireEnv } from '../shared/config';
import { logger } from '../shared/observability';
import { json, notFound, problem, unexpectedErrorResponse, type HttpResponse } from './http';
import { ENV } from '../shared/env-names';

/**
 * A GET on one consumer effect (points of a customer, reserved stock of a SKU):
 * validate the path parameter, read the Effects table, 200 with the value or 404.
 */
export function effectReadHandler(options: {
  parameter: string;
  maxLength: number;
  title: string;
  read: (reader: EffectsReader, id: string) => Promise<number | undefined>;
  body: (id: string, value: number) => Record<string, unknown>;
  missing: (id: string) => string;
}): (event: APIGatewayProxyEvent, context: Context) => Promise<HttpResponse> {
  const reader = new DynamoDbEffectsReader(dynamoDbDocumentClient(), requireEnv(ENV.effectsTable));
  return async (event, context) => {
    logger.addContext(context);
    const id = event.pathParameters?.[options.parameter];
    if (id === undefined || id.length === 0 || id.length > options.maxLength) {
      return problem({
        status: 400,
        title: options.title,
        detail: `${options.parameter} must be 1 to ${options.maxLength} characters.`,
      });
    }
    try {
      const value = await options.read(reader, id);
      return value === undefined ? notFound(options.missing(id)) : json(200, options.body(id, value));
    } catch (error) {
      return unexpectedErrorResponse(error);
    }
  };
}
