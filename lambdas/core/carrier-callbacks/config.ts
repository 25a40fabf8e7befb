import { requireEnv } from '../config';

/**
 * What the callback functions need to check a signature, read once at init so a function missing
 * either fails its first invocation loudly:
 *   TWILIO_AUTH_TOKEN  the account's auth token (in AWS injected from Secrets Manager)
 *   PUBLIC_BASE_URL    the API root as Twilio calls it (scheme, host and any stage or base path,
 *                      no trailing slash); the route's path is appended. Configurable because a
 *                      proxy, a custom domain or a tunnel changes what Twilio signed.
 */
export type CallbackConfig = { authToken: string; publicBaseUrl: string };

/** The local runtime's and the operator CLI's shared default; never used in AWS (requireEnv there). */
export const LOCAL_TWILIO_AUTH_TOKEN = 'local-twilio-auth-token';

export function normalizePublicBaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`PUBLIC_BASE_URL must be an absolute URL such as https://api.example.com (got "${raw}")`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('PUBLIC_BASE_URL must be an http or https URL');
  if (url.search || url.hash) throw new Error('PUBLIC_BASE_URL must not have a query string or fragment');
  // Kept as written (not re-serialised): Twilio signs the URL exactly as it was configured there.
  return raw.replace(/\/+$/, '');
}

export function callbackConfigFromEnv(): CallbackConfig {
  return { authToken: requireEnv('TWILIO_AUTH_TOKEN'), publicBaseUrl: normalizePublicBaseUrl(requireEnv('PUBLIC_BASE_URL')) };
}
