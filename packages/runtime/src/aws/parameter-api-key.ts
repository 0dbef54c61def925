import { getParameter } from '@aws-lambda-powertools/parameters/ssm';

/**
 * How long a container keeps an API key before it reads the parameter again: a rotated key is picked up within it.
 *
 * @example
 * ```ts
 * const apiKey = apiKeyFromParameter('/shop/prod/mail-api-key', API_KEY_CACHE_SECONDS); // the default, spelled out
 * ```
 */
export const API_KEY_CACHE_SECONDS = 300;

/**
 * An HTTP provider's API key, read from an SSM SecureString parameter through Powertools
 * Parameters: decrypted, and cached per container for {@link API_KEY_CACHE_SECONDS}, so a busy
 * consumer reads the parameter once every five minutes, not once per call. The key is returned to
 * the provider adapter only; it is never logged or put in an error.
 *
 * @example
 * ```ts
 * const apiKey = apiKeyFromParameter('/shop/prod/mail-api-key');
 * const mail = new HttpProvider({ name: 'mail', endpoint, apiKey, refreshApiKey: apiKey.refresh });
 * ```
 */
export function apiKeyFromParameter(parameterName: string, maxAgeSeconds = API_KEY_CACHE_SECONDS): RefreshableApiKey {
  let forceFetch = false;
  const read = async () => {
    const value = await getParameter(parameterName, { decrypt: true, maxAge: maxAgeSeconds, forceFetch });
    forceFetch = false;
    if (typeof value !== 'string' || value.trim() === '') {
      throw new Error(`The API key parameter ${parameterName} is empty`);
    }
    return value;
  };
  // After a 401 (HttpProvider's refreshApiKey): the next read skips the cache, so a rotated key is picked up.
  return Object.assign(read, { refresh: () => void (forceFetch = true) });
}

/**
 * An API key source whose cached value can be dropped (after the provider refused it).
 *
 * @example
 * ```ts
 * const apiKey: RefreshableApiKey = apiKeyFromParameter('/shop/prod/mail-api-key');
 * new HttpProvider({ name: 'mail', endpoint, apiKey, refreshApiKey: apiKey.refresh });
 * ```
 */
export type RefreshableApiKey = (() => Promise<string>) & { refresh(): void };
