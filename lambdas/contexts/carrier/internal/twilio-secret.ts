import { Logger } from '@aws-lambda-powertools/logger';
import { optionalEnv } from '../../../shared/config';

/**
 * The Twilio credentials (Account SID and Auth Token), from one of two places:
 *   TWILIO_SECRET_ARN set  -> the AWS Secrets Manager secret it names, a JSON object
 *                             {"accountSid": "AC...", "authToken": "..."} (what the stack wires up);
 *   otherwise              -> TWILIO_ACCOUNT_SID / TWILIO_AUTH_TOKEN from the environment (the local
 *                             runtime and the tests, where no Secrets Manager is reachable).
 * Inside AWS Lambda the environment is refused: credentials there are never plain environment
 * values, so a function deployed without TWILIO_SECRET_ARN fails at init instead of running with
 * whatever someone typed into its configuration.
 *
 * Reads go through Powertools' `getSecret`, cached per execution environment for
 * SECRET_MAX_AGE_SECONDS: a changed secret reaches every function within that time, without a
 * Secrets Manager call per request. The secret is also read once while the function initialises
 * (`preloadTwilioSecret`, run by lambdas/contexts/carrier/twilio-secret-preload.ts with a top-level await in the ES
 * module bundle), so a missing, unreadable or unfilled secret fails the function's init loudly,
 * and the synchronous readers (`twilioSecretNow`) have a value from the first invocation on.
 */
export const TWILIO_SECRET_ARN_ENV = 'TWILIO_SECRET_ARN';

/** How long a read secret is used before it is read again (Powertools' default is 5 s). */
export const SECRET_MAX_AGE_SECONDS = 300;

export type TwilioCredentials = { accountSid: string; authToken: string };

/** Where the credentials come from, decided from the environment alone (no I/O). */
export type TwilioCredentialSource = { kind: 'secret'; secretArn: string } | { kind: 'environment' };

/** Set by Lambda in every function's environment: the one sign that this process is a deployed function. */
export const runsInLambda = (): boolean => optionalEnv('AWS_LAMBDA_FUNCTION_NAME') !== undefined;

export function twilioCredentialSource(): TwilioCredentialSource {
  const secretArn = optionalEnv(TWILIO_SECRET_ARN_ENV);
  if (secretArn) return { kind: 'secret', secretArn };
  if (runsInLambda()) {
    throw new Error(
      `Missing required environment variable ${TWILIO_SECRET_ARN_ENV}: in AWS Lambda the Twilio credentials come ` +
        `from Secrets Manager, never from plain environment variables`,
    );
  }
  return { kind: 'environment' };
}

/**
 * The secret's value as stored, checked. The messages name the secret and the missing field,
 * never a value; the stack creates the secret with empty fields, so "not filled in yet" is the
 * first thing an operator will see here.
 */
export function parseTwilioSecret(value: unknown, secretArn: string): TwilioCredentials {
  const where = `Secrets Manager secret ${secretArn}`;
  const hint = 'store {"accountSid":"AC...","authToken":"..."} in it (docs/deploy.md, "Twilio credentials")';
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Error(`The ${where} is not a JSON object: ${hint}`);
  const record = value as Record<string, unknown>;
  const field = (name: keyof TwilioCredentials): string => {
    const v = record[name];
    if (typeof v !== 'string' || v.trim() === '') throw new Error(`The ${where} has no ${name} yet: ${hint}`);
    return v.trim();
  };
  return { accountSid: field('accountSid'), authToken: field('authToken') };
}

/** Reads (or takes from Powertools' cache) and checks the secret. */
export async function readTwilioSecret(
  secretArn: string,
  options: { forceFetch?: boolean } = {},
): Promise<TwilioCredentials> {
  let value: unknown;
  try {
    // Loaded on first use: the local runtime and the operator CLI import this module (through the
    // callback configuration) but never read a secret, so they need not load the SDK client.
    const { getSecret } = await import('@aws-lambda-powertools/parameters/secrets');
    value = await getSecret(secretArn, {
      transform: 'json',
      maxAge: SECRET_MAX_AGE_SECONDS,
      forceFetch: options.forceFetch,
    });
  } catch (err) {
    const where = `Could not read the Twilio credentials from Secrets Manager secret ${secretArn}`;
    // JSON.parse quotes the start of what it could not parse, which here is the secret itself:
    // neither that message nor the error (as a cause) may reach a log.
    if ((err as Error).name === 'TransformParameterError') {
      // eslint-disable-next-line preserve-caught-error -- the cause quotes the secret's value (see above)
      throw new Error(`${where}: its value is not JSON`);
    }
    throw new Error(`${where}: ${(err as Error).message}`, { cause: err });
  }
  return parseTwilioSecret(value, secretArn);
}

/**
 * The last credentials read, for code that must answer synchronously (the callback handlers'
 * signature check). Kept per secret ARN; `readAt` decides when a refresh is due.
 */
type Snapshot = { secretArn: string; credentials: TwilioCredentials; readAt: number };
let snapshot: Snapshot | undefined;
let refreshing: Promise<void> | undefined;

/**
 * Reads the secret named by TWILIO_SECRET_ARN into the snapshot; nothing to do without one. Run
 * at init (see lambdas/contexts/carrier/twilio-secret-preload.ts): a rejection here fails the function's init.
 */
export async function preloadTwilioSecret(): Promise<void> {
  const source = twilioCredentialSource();
  if (source.kind !== 'secret') return;
  const credentials = await readTwilioSecret(source.secretArn);
  snapshot = { secretArn: source.secretArn, credentials, readAt: Date.now() };
}

/** Reports a failed background refresh: the last good credentials stay in use. */
export type RefreshFailureReporter = (error: Error) => void;

// Its own logger rather than lambdas/shared/aws.ts's, which opens the table at import: the operator
// CLI imports the callback configuration (for the local token) before it has chosen a table.
let secretsLogger: Logger | undefined;
const logRefreshFailure: RefreshFailureReporter = (error) => {
  secretsLogger ??= new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'cct-service' });
  secretsLogger.error('Could not refresh the Twilio credentials from Secrets Manager; still using the previous ones', {
    error,
  });
};

/**
 * The secret's credentials, synchronously: the snapshot read at init, refreshed in the background
 * once it is older than SECRET_MAX_AGE_SECONDS (this call answers with the current one; a later
 * call sees the refreshed one). Throws when no snapshot exists: the function was bundled without
 * the preload, or the preload failed.
 */
export function twilioSecretNow(
  secretArn: string,
  onRefreshFailure: RefreshFailureReporter = logRefreshFailure,
): TwilioCredentials {
  if (!snapshot || snapshot.secretArn !== secretArn) {
    throw new Error(
      `The Twilio credentials of ${secretArn} were not loaded at init: the function must be bundled with ` +
        `lambdas/contexts/carrier/twilio-secret-preload.ts (FunctionSpec.preload)`,
    );
  }
  if (Date.now() - snapshot.readAt > SECRET_MAX_AGE_SECONDS * 1000 && !refreshing) {
    refreshing = readTwilioSecret(secretArn)
      .then((credentials) => {
        snapshot = { secretArn, credentials, readAt: Date.now() };
      })
      .catch((err: Error) => {
        // Try again on a later call rather than on every one; the old credentials stay.
        if (snapshot) snapshot = { ...snapshot, readAt: Date.now() };
        onRefreshFailure(err);
      })
      .finally(() => {
        refreshing = undefined;
      });
  }
  return snapshot.credentials;
}

/** Settles when a background refresh started by `twilioSecretNow` has (tests, and nothing else, wait for it). */
export const pendingTwilioSecretRefresh = (): Promise<void> => refreshing ?? Promise.resolve();

/** Tests only: forget the snapshot (Powertools' own cache is cleared with `clearCaches`). */
export function resetTwilioSecretSnapshot(): void {
  snapshot = undefined;
  refreshing = undefined;
}
