import { requireEnv } from '../../shared/config';
import { twilioCredentialSource, twilioSecretNow } from './internal/twilio-secret';

/**
 * What the callback functions need to check a signature, read once at init so a function missing
 * either fails its first invocation loudly:
 *   auth token       with TWILIO_SECRET_ARN: the secret's `authToken` (AWS; read at init by the
 *                    preload of lambdas/contexts/carrier/internal/twilio-secret.ts and re-read every few minutes), else
 *                    TWILIO_AUTH_TOKEN (the local runtime and the tests; refused inside Lambda)
 *   PUBLIC_BASE_URL  the API root as Twilio calls it (scheme, host and any stage or base path,
 *                    no trailing slash); the route's path is appended. Configurable because a
 *                    proxy, a custom domain or a tunnel changes what Twilio signed.
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
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new Error('PUBLIC_BASE_URL must be an http or https URL');
  if (url.search || url.hash) throw new Error('PUBLIC_BASE_URL must not have a query string or fragment');
  // Kept as written (not re-serialised): Twilio signs the URL exactly as it was configured there.
  return raw.replace(/\/+$/, '');
}

export function callbackConfigFromEnv(): CallbackConfig {
  const source = twilioCredentialSource();
  const publicBaseUrl = normalizePublicBaseUrl(requireEnv('PUBLIC_BASE_URL'));
  if (source.kind === 'environment') return { authToken: requireEnv('TWILIO_AUTH_TOKEN'), publicBaseUrl };
  const { secretArn } = source;
  // Throws now, at init, unless the secret was loaded; afterwards each read of `authToken` (one
  // per callback) takes the current value, so a changed token is picked up without a cold start.
  twilioSecretNow(secretArn);
  return {
    publicBaseUrl,
    get authToken(): string {
      return twilioSecretNow(secretArn).authToken;
    },
  };
}
