import { intEnv, optionalEnv, requireEnv } from '../../shared/config';
import type { Carrier } from '../texting/carrier-port';
import { TwilioCarrier } from './internal/twilio';
import { readTwilioSecret, runsInLambda, twilioCredentialSource, twilioSecretNow } from './internal/twilio-secret';
import { LoopbackCarrier } from './loopback';

/**
 * The carrier named by `CARRIER`, built once at init. Anything else, or a missing credential,
 * throws while the module loads, so a misconfigured function fails loudly instead of at the first
 * send.
 *   CARRIER=twilio   credentials from the Secrets Manager secret TWILIO_SECRET_ARN (AWS: read at
 *                    init by the bundle's preload, then per send through Powertools' cache, so a
 *                    changed secret is used within minutes), else TWILIO_ACCOUNT_SID and
 *                    TWILIO_AUTH_TOKEN (local runtime, tests; refused inside Lambda); optional
 *                    TWILIO_BASE_URL, TWILIO_STATUS_CALLBACK_URL
 *   CARRIER=loopback optional LOOPBACK_STATUS_DELAY_MS (default 1000), LOOPBACK_FAIL_TO (comma-separated numbers).
 *                    Refused inside AWS Lambda: it would answer every send with an invented sid.
 */
export function createCarrier(): Carrier {
  const kind = optionalEnv('CARRIER');
  switch (kind) {
    case 'twilio': {
      const options = {
        baseUrl: optionalEnv('TWILIO_BASE_URL'),
        statusCallbackUrl: optionalEnv('TWILIO_STATUS_CALLBACK_URL'),
      };
      const source = twilioCredentialSource();
      if (source.kind === 'environment') {
        return new TwilioCarrier({
          accountSid: requireEnv('TWILIO_ACCOUNT_SID'),
          authToken: requireEnv('TWILIO_AUTH_TOKEN'),
          ...options,
        });
      }
      const { secretArn } = source;
      // Throws now unless the preload read the secret at init; each send then reads it through
      // Powertools' cache (a Secrets Manager call at most every SECRET_MAX_AGE_SECONDS).
      twilioSecretNow(secretArn);
      return new TwilioCarrier({ credentials: () => readTwilioSecret(secretArn), ...options });
    }
    case 'loopback':
      if (runsInLambda()) {
        throw new Error(
          'CARRIER=loopback is for the local runtime and tests only; a deployed function must use CARRIER=twilio',
        );
      }
      return new LoopbackCarrier({
        statusDelayMs: intEnv('LOOPBACK_STATUS_DELAY_MS', 1000),
        failTo: (optionalEnv('LOOPBACK_FAIL_TO') ?? '')
          .split(',')
          .map((n) => n.trim())
          .filter(Boolean),
      });
    default:
      throw new Error(
        `Environment variable CARRIER must be "twilio" or "loopback" (got ` +
          `${kind === undefined ? 'nothing' : `"${kind}"`})`,
      );
  }
}
