/**
 * Helpers for unit tests of the API handlers: a quiet environment with no real
 * AWS behind it, and the problem+json assertion every error response must pass.
 */
export function useUnitEnvironment(env: Record<string, string> = {}): void {
  Object.assign(process.env, {
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    POWERTOOLS_SERVICE_NAME: 'unit-test',
    POWERTOOLS_METRICS_NAMESPACE: 'UnitTest',
    POWERTOOLS_METRICS_DISABLED: 'true',
    POWERTOOLS_LOG_LEVEL: 'SILENT',
    POWERTOOLS_DEV: 'true',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    ...env,
  });
}

export interface HttpResult {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  errors?: { field: string; message: string }[];
}

/**
 * Asserts an RFC 9457 problem response: the status, the media type, the four
 * members, and no trace of a stack or an internal error name.
 */
export function expectProblem(response: HttpResult, status: number): ProblemBody {
  expect(response.statusCode).toBe(status);
  expect(response.headers['Content-Type']).toBe('application/problem+json');
  const body = JSON.parse(response.body) as ProblemBody;
  expect(body).toEqual(
    expect.objectContaining({
      type: expect.stringMatching(/\S/),
      title: expect.stringMatching(/\S/),
      status,
      detail: expect.stringMatching(/\S/),
    }),
  );
  expect(response.body).not.toMatch(/\n\s+at |Error:|stack/);
  return body;
}
