import { referencedLogicalId } from '@exactly-once/cdk/template';
import { functionLogicalIdIn } from './lambda';
import { resourcesOfType, type CfnTemplate } from './model';

export interface RouteDefinition {
  methodLogicalId: string;
  /** Upper case, or ANY. */
  httpMethod: string;
  /** API Gateway resource path, e.g. `/orders/{orderId}` or `/{proxy+}`. */
  resourcePath: string;
  resourceId: string;
  authorizationType: string;
  functionLogicalId: string;
  /** Request parameters marked required, checked when the method's validator validates parameters. */
  requiredParameters: string[];
  validatesParameters: boolean;
  integrationTimeoutMs: number;
}

export interface GatewayResponseDefinition {
  statusCode?: number;
  headers: Record<string, string>;
  template?: string;
}

export interface RestApiDefinition {
  logicalId: string;
  name: string;
  stageName?: string;
  binaryMediaTypes: string[];
  routes: RouteDefinition[];
  gatewayResponses: Record<string, GatewayResponseDefinition>;
  /** Methods whose integration the runtime cannot run (not AWS_PROXY to a function of the stack). */
  unsupportedMethods: { logicalId: string; reason: string }[];
}

type Properties = Record<string, unknown>;

/**
 * Reads each AWS::ApiGateway::RestApi with its resource tree, methods with
 * AWS_PROXY Lambda integrations, stage name, gateway responses (so errors the
 * gateway makes look as deployed) and request validators.
 */
export function restApiDefinitions(template: CfnTemplate): RestApiDefinition[] {
  const all = template.Resources;
  return resourcesOfType(template, 'AWS::ApiGateway::RestApi').map(([apiId, api]) => {
    const belongs = (p: Properties | undefined) => referencedLogicalId(p?.RestApiId) === apiId;
    // A method on the root names it `Fn::GetAtt [Api, RootResourceId]`: locally that resource is 'root'.
    const resourceIdOf = (resourceRef: unknown): string => {
      const id = referencedLogicalId(resourceRef);
      return id !== undefined && all[id]?.Type === 'AWS::ApiGateway::Resource' ? id : 'root';
    };
    const pathOf = (resourceRef: unknown): string => {
      const id = referencedLogicalId(resourceRef);
      if (id === undefined || all[id]?.Type !== 'AWS::ApiGateway::Resource') return ''; // Fn::GetAtt Api.RootResourceId
      const p = all[id].Properties ?? {};
      return `${pathOf(p.ParentId)}/${String(p.PathPart)}`;
    };
    const validators = new Map(
      resourcesOfType(template, 'AWS::ApiGateway::RequestValidator').map(([id, r]) => [
        id,
        r.Properties?.ValidateRequestParameters === true,
      ]),
    );
    const routes: RouteDefinition[] = [];
    const unsupportedMethods: RestApiDefinition['unsupportedMethods'] = [];
    for (const [methodId, method] of resourcesOfType(template, 'AWS::ApiGateway::Method')) {
      const p = method.Properties ?? {};
      if (!belongs(p)) continue;
      const integration = (p.Integration ?? {}) as Properties;
      const functionLogicalId = functionLogicalIdIn(integration.Uri, template);
      if (integration.Type !== 'AWS_PROXY' || functionLogicalId === undefined) {
        unsupportedMethods.push({
          logicalId: methodId,
          reason: `integration ${String(integration.Type)} (only AWS_PROXY to a Lambda function of the stack)`,
        });
        continue;
      }
      const validatorId = referencedLogicalId(p.RequestValidatorId);
      routes.push({
        methodLogicalId: methodId,
        httpMethod: String(p.HttpMethod).toUpperCase(),
        resourcePath: pathOf(p.ResourceId) || '/',
        resourceId: resourceIdOf(p.ResourceId),
        authorizationType: String(p.AuthorizationType ?? 'NONE'),
        functionLogicalId,
        requiredParameters: Object.entries((p.RequestParameters ?? {}) as Record<string, unknown>)
          .filter(([, required]) => required === true)
          .map(([name]) => name),
        validatesParameters: validatorId !== undefined && validators.get(validatorId) === true,
        integrationTimeoutMs: Number(integration.TimeoutInMillis ?? 29_000),
      });
    }
    const stage = resourcesOfType(template, 'AWS::ApiGateway::Stage').find(([, s]) => belongs(s.Properties));
    const gatewayResponses: Record<string, GatewayResponseDefinition> = {};
    for (const [, response] of resourcesOfType(template, 'AWS::ApiGateway::GatewayResponse')) {
      const p = response.Properties ?? {};
      if (!belongs(p)) continue;
      const headers: Record<string, string> = {};
      for (const [key, value] of Object.entries((p.ResponseParameters ?? {}) as Record<string, string>)) {
        const name = /^gatewayresponse\.header\.(.+)$/.exec(key)?.[1];
        if (name !== undefined) headers[name] = value.replace(/^'(.*)'$/, '$1');
      }
      const templates = (p.ResponseTemplates ?? {}) as Record<string, string>;
      gatewayResponses[String(p.ResponseType)] = {
        statusCode: p.StatusCode === undefined ? undefined : Number(p.StatusCode),
        headers,
        template: templates['application/json'] ?? Object.values(templates)[0],
      };
    }
    const props = api.Properties ?? {};
    return {
      logicalId: apiId,
      name: String(props.Name ?? apiId),
      stageName: stage?.[1].Properties?.StageName as string | undefined,
      binaryMediaTypes: (props.BinaryMediaTypes as string[] | undefined) ?? [],
      routes,
      gatewayResponses,
      unsupportedMethods,
    };
  });
}
