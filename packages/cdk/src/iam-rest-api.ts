import { RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { FunctionWithDefaults } from './function-defaults';
import { defaultLogGroupProps } from './log-group-defaults';

/** API Gateway's error message as a quoted, JSON-escaped string (gateway responses do simple substitution only). */
const MESSAGE_STRING = '$context.error.messageString';

/**
 * Every gateway response type whose status API Gateway fixes, with that status and a problem title:
 * the body of each is application/problem+json with that `status`.
 *
 * @example What the local runtime and the tests check the API's gateway responses against
 * ```ts
 * for (const [type, status, title] of GATEWAY_ERRORS) expect(responseOf(type)).toMatchObject({ status, title });
 * ```
 */
export const GATEWAY_ERRORS: readonly [type: apigw.ResponseType, status: number, title: string][] = [
  [apigw.ResponseType.ACCESS_DENIED, 403, 'Access denied'],
  [apigw.ResponseType.API_CONFIGURATION_ERROR, 500, 'API configuration error'],
  [apigw.ResponseType.AUTHORIZER_CONFIGURATION_ERROR, 500, 'Authorizer configuration error'],
  [apigw.ResponseType.AUTHORIZER_FAILURE, 500, 'Authorizer failure'],
  [apigw.ResponseType.BAD_REQUEST_BODY, 400, 'Invalid request body'],
  [apigw.ResponseType.BAD_REQUEST_PARAMETERS, 400, 'Invalid request'],
  [apigw.ResponseType.EXPIRED_TOKEN, 403, 'Expired credentials'],
  [apigw.ResponseType.INTEGRATION_FAILURE, 504, 'Integration failure'],
  [apigw.ResponseType.INTEGRATION_TIMEOUT, 504, 'Integration timeout'],
  [apigw.ResponseType.INVALID_API_KEY, 403, 'Invalid API key'],
  [apigw.ResponseType.INVALID_SIGNATURE, 403, 'Invalid signature'],
  [apigw.ResponseType.MISSING_AUTHENTICATION_TOKEN, 403, 'Missing authentication'],
  [apigw.ResponseType.QUOTA_EXCEEDED, 429, 'Quota exceeded'],
  [apigw.ResponseType.REQUEST_TOO_LARGE, 413, 'Request too large'],
  [apigw.ResponseType.RESOURCE_NOT_FOUND, 404, 'Resource not found'],
  [apigw.ResponseType.THROTTLED, 429, 'Too many requests'],
  [apigw.ResponseType.UNAUTHORIZED, 401, 'Unauthorized'],
  [apigw.ResponseType.UNSUPPORTED_MEDIA_TYPE, 415, 'Unsupported media type'],
  [apigw.ResponseType.WAF_FILTERED, 403, 'Request blocked'],
];

/**
 * An {@link IamRestApi}'s settings: what it is and how much it lets through.
 *
 * @example
 * ```ts
 * const props: IamRestApiProps = { description: 'Bookings', rateLimit: 100, burstLimit: 200, createAccountLoggingRole: true };
 * ```
 */
export interface IamRestApiProps {
  /** What the API is, for the console. */
  readonly description: string;
  /** Stage throttling: steady requests per second. */
  readonly rateLimit: number;
  /** Stage throttling: burst. */
  readonly burstLimit: number;
  /**
   * Create the account-wide API Gateway CloudWatch Logs role (retained when the stack is destroyed, so
   * other stages keep logging), or rely on the one the account already has. Access logging fails to
   * deploy without one.
   */
  readonly createAccountLoggingRole: boolean;
}

/**
 * A REST API for idempotent commands (the mechanism's `idempotentCommand` behind each POST): IAM
 * (SigV4) on every method, so a caller is a principal the keys are scoped to; request validation; access
 * logs; stage throttling and tracing; and every gateway-made error as application/problem+json, like
 * the ones the handlers make. cdk-nag's findings on it are acknowledged here, each with its reason.
 *
 * @example
 * ```ts
 * const api = new IamRestApi(this, 'BookingsApi', { description: 'Bookings', rateLimit: 100, burstLimit: 200, createAccountLoggingRole: true });
 * api.addIdempotentPost(api.api.root.addResource('bookings'), createBooking, api.model('BookingRequest', bookingRequestJsonSchema));
 * ```
 */
export class IamRestApi extends Construct {
  readonly api: apigw.RestApi;
  protected readonly validator: apigw.RequestValidator;

  constructor(scope: Construct, id: string, props: IamRestApiProps) {
    super(scope, id);

    const accessLogs = new logs.LogGroup(this, 'AccessLogs', {
      ...defaultLogGroupProps(),
      removalPolicy: RemovalPolicy.DESTROY,
    });

    this.api = new apigw.RestApi(this, 'Api', {
      // Unique per stage: the API's CloudWatch metrics (and the 5xx alarm) are keyed by this name.
      restApiName: Stack.of(this).stackName,
      description: props.description,
      endpointTypes: [apigw.EndpointType.REGIONAL],
      // Access logging needs the account-level CloudWatch role (one per account and region). When this stack
      // creates it, it is retained on destroy: another stage may be logging through it.
      cloudWatchRole: props.createAccountLoggingRole,
      cloudWatchRoleRemovalPolicy: props.createAccountLoggingRole ? RemovalPolicy.RETAIN : undefined,
      defaultMethodOptions: { authorizationType: apigw.AuthorizationType.IAM },
      deployOptions: {
        stageName: 'api',
        throttlingRateLimit: props.rateLimit,
        throttlingBurstLimit: props.burstLimit,
        loggingLevel: apigw.MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
        tracingEnabled: true,
        metricsEnabled: true,
        accessLogDestination: new apigw.LogGroupLogDestination(accessLogs),
        accessLogFormat: apigw.AccessLogFormat.jsonWithStandardFields(),
      },
    });
    this.addProblemGatewayResponses();

    this.validator = new apigw.RequestValidator(this, 'Validator', {
      restApi: this.api,
      validateRequestBody: true,
      validateRequestParameters: true,
    });

    Validations.of(this.api).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
      reason: 'The account-level API Gateway logging role uses the AWS-managed policy made for exactly that purpose.',
    });
    Validations.of(this.api).acknowledge({
      id: 'AwsSolutions-APIG3',
      reason:
        'Every method requires IAM (SigV4) auth and the stage is throttled; attach a WAF web ACL when exposing the API to untrusted networks.',
    });
    Validations.of(this.api).acknowledge({
      id: 'AwsSolutions-COG4',
      reason: 'Callers are IAM principals (SigV4); there is no Cognito user pool by design.',
    });
  }

  /**
   * A request model from a JSON schema (draft 4), e.g. generated from the zod schema the handler
   * validates with, so API Gateway and the handler refuse the same bodies.
   */
  model(name: string, schema: apigw.JsonSchema): apigw.Model {
    return this.api.addModel(name, { contentType: 'application/json', modelName: name, schema });
  }

  /** An idempotent POST on `resource`: the body validated against `model`, the Idempotency-Key header required. */
  addIdempotentPost(resource: apigw.IResource, fn: FunctionWithDefaults, model: apigw.IModel): apigw.Method {
    return resource.addMethod('POST', new apigw.LambdaIntegration(fn.fn), {
      requestValidator: this.validator,
      requestParameters: { 'method.request.header.Idempotency-Key': true },
      requestModels: { 'application/json': model },
    });
  }

  /** A GET on `resource` backed by `fn`, with its path parameter required. */
  addGet(resource: apigw.IResource, fn: FunctionWithDefaults, pathParameter: string): void {
    resource.addMethod('GET', new apigw.LambdaIntegration(fn.fn), {
      requestValidator: this.validator,
      requestParameters: { [`method.request.path.${pathParameter}`]: true },
    });
  }

  private addProblemGatewayResponses(): void {
    const problemResponse = (type: apigw.ResponseType, status: number | undefined, title: string) =>
      this.api.addGatewayResponse(type.responseType.toLowerCase().replaceAll('_', '-'), {
        type,
        statusCode: status === undefined ? undefined : String(status),
        responseHeaders: { 'Content-Type': "'application/problem+json'" },
        templates: {
          'application/json': JSON.stringify({
            type: `urn:problem-type:${type.responseType.toLowerCase().replaceAll('_', '-')}`,
            title,
            ...(status === undefined ? {} : { status }),
            detail: MESSAGE_STRING,
            // `messageString` is already a quoted, escaped JSON string: unquote our placeholder.
          }).replace(`"${MESSAGE_STRING}"`, MESSAGE_STRING),
        },
      });
    // One response per type, with the status API Gateway gives that type, so the body can say it
    // (`status` of problem+json). Gateway response templates are plain substitution, not VTL: no
    // $util.escapeJavaScript, so nothing but the already-escaped `messageString` goes into the body.
    // The validator's `validationErrorString` quotes field names (["customerId"]) and would break the
    // JSON: a BAD_REQUEST_BODY says "Invalid request body"; the handler's own validation names the fields.
    for (const [type, status, title] of GATEWAY_ERRORS) problemResponse(type, status, title);
    // The fallbacks, for a type API Gateway adds later: their status varies, so the body leaves it out.
    problemResponse(apigw.ResponseType.DEFAULT_4XX, undefined, 'Request refused');
    problemResponse(apigw.ResponseType.DEFAULT_5XX, undefined, 'Service error');
  }
}
