/**
 * Where a consumer's external provider is, per stage: its endpoint and the SSM SecureString
 * parameter that holds its API key (created outside the stack, e.g. `aws ssm put-parameter --type
 * SecureString`), so no key is ever in the template, an environment variable or a log.
 *
 * @example
 * ```ts
 * const mail: ProviderEndpoint = { endpoint: 'https://mail.example/v1/messages', apiKeyParameter: '/shop/prod/mail-api-key' };
 * ```
 */
export interface ProviderEndpoint {
  /** The URL the provider's calls are POSTed to: `https://`, or `http://` on a loopback host only. */
  readonly endpoint: string;
  /** The name of the SSM SecureString parameter holding the API key, e.g. `/shop/prod/mail-api-key`. */
  readonly apiKeyParameter: string;
}

/**
 * The configured providers, by name (the names consumer specs list in `providers`).
 *
 * @example
 * ```ts
 * new ConsumerPipelines(this, 'Pipelines', { ...props, providers: { mail } satisfies ProviderEndpoints });
 * ```
 */
export type ProviderEndpoints = Readonly<Record<string, ProviderEndpoint>>;

/**
 * The context key: `{ "<stage>": { "<provider>": { "endpoint": ..., "apiKeyParameter": ... } } }`.
 *
 * @example
 * ```ts
 * const providers = providerEndpointsOf(app.node.tryGetContext(PROVIDERS_CONTEXT), 'prod');
 * ```
 */
export const PROVIDERS_CONTEXT = 'providers';

const PROVIDER_NAME = /^[a-z][a-z0-9-]{0,30}[a-z0-9]$/;
const PARAMETER_NAME = /^\/[A-Za-z0-9_.\-/]{1,1010}$/;
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * Reads one stage's providers from the `providers` context value (an object in cdk.json, or the
 * same as a JSON string with `-c providers=...`). Unset: none configured. Throws a one-line Error
 * naming the bad value; nothing else is checked here (which consumer calls which provider is the
 * pipelines' check).
 *
 * @example
 * ```ts
 * // cdk.json: "providers": { "prod": { "mail": { "endpoint": "https://api.mail.example/v1/messages", "apiKeyParameter": "/shop/prod/mail-api-key" } } }
 * const providers = providerEndpointsOf(app.node.tryGetContext(PROVIDERS_CONTEXT), 'prod');
 * ```
 */
export function providerEndpointsOf(value: unknown, stage: string): ProviderEndpoints {
  if (value === undefined) return {};
  const all = typeof value === 'string' ? parseJson(value) : value;
  if (!isRecord(all))
    throw new Error(`Context ${PROVIDERS_CONTEXT} must be an object keyed by stage, got ${show(value)}`);
  const forStage = all[stage];
  if (forStage === undefined) return {};
  if (!isRecord(forStage))
    throw new Error(`Context ${PROVIDERS_CONTEXT}.${stage} must be an object keyed by provider, got ${show(forStage)}`);
  return Object.fromEntries(
    Object.entries(forStage).map(([name, settings]) => {
      const where = `Context ${PROVIDERS_CONTEXT}.${stage}.${name}`;
      if (!PROVIDER_NAME.test(name))
        throw new Error(`${where}: a provider name is 2-32 lower-case letters, digits and hyphens`);
      if (!isRecord(settings)) throw new Error(`${where} must be { endpoint, apiKeyParameter }, got ${show(settings)}`);
      return [
        name,
        {
          endpoint: endpointOf(where, settings.endpoint),
          apiKeyParameter: parameterOf(where, settings.apiKeyParameter),
        },
      ];
    }),
  );
}

function endpointOf(where: string, value: unknown): string {
  let url: URL | undefined;
  try {
    url = typeof value === 'string' ? new URL(value) : undefined;
  } catch {
    url = undefined;
  }
  const allowed =
    url !== undefined && (url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK.has(url.hostname)));
  // Credentials or a query in the URL would end up in the template and in error messages.
  if (!allowed || url!.username !== '' || url!.password !== '' || url!.search !== '')
    throw new Error(
      `${where}.endpoint must be an https:// URL (http:// only on a loopback host) without credentials or query, got ${show(value)}`,
    );
  return value as string;
}

function parameterOf(where: string, value: unknown): string {
  if (typeof value === 'string' && PARAMETER_NAME.test(value)) return value;
  throw new Error(`${where}.apiKeyParameter must be an SSM parameter name starting with /, got ${show(value)}`);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`Context ${PROVIDERS_CONTEXT} must be JSON when given as a string, got ${show(text)}`);
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const show = (value: unknown): string => JSON.stringify(value)?.slice(0, 120) ?? String(value);
