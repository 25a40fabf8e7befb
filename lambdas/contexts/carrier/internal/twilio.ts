import { CarrierError, type Carrier, type CarrierReceipt, type OutboundText } from '../../texting/carrier-port';
import type { DeliveryStatus } from '../../texting/messages';

/**
 * Twilio's Programmable Messaging API over plain fetch (no SDK: one endpoint, form-encoded).
 * POST {baseUrl}/2010-04-01/Accounts/{AccountSid}/Messages.json with Basic auth
 * AccountSid:AuthToken. `baseUrl` is overridable so tests talk to a local stub server.
 */
export const TWILIO_API_BASE_URL = 'https://api.twilio.com';

/** The account's credentials, fixed (environment, tests) or read per send (a cached Secrets Manager read). */
export type TwilioCredentialsConfig =
  | { accountSid: string; authToken: string }
  | { credentials: () => Promise<{ accountSid: string; authToken: string }> };

export type TwilioConfig = TwilioCredentialsConfig & {
  baseUrl?: string;
  /** Where Twilio posts status changes of each message; omitted when not configured. */
  statusCallbackUrl?: string;
  /** Stay well inside API Gateway's 29 s so a slow carrier becomes a 502, not a gateway timeout. */
  timeoutMs?: number;
};

type TwilioMessage = { sid?: unknown };
type TwilioErrorBody = { code?: unknown };
type Endpoint = { url: string; authorization: string };

export class TwilioCarrier implements Carrier {
  readonly name = 'twilio' as const;
  // Private fields, so logging the carrier object can never print the credentials.
  readonly #endpoint: () => Promise<Endpoint>;
  readonly #statusCallbackUrl?: string;
  readonly #timeoutMs: number;

  constructor(config: TwilioConfig) {
    const base = (config.baseUrl ?? TWILIO_API_BASE_URL).replace(/\/+$/, '');
    const endpointOf = ({ accountSid, authToken }: { accountSid: string; authToken: string }): Endpoint => ({
      url: `${base}/2010-04-01/Accounts/${encodeURIComponent(accountSid)}/Messages.json`,
      authorization: `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`,
    });
    if ('credentials' in config) {
      const read = config.credentials;
      this.#endpoint = async () => {
        try {
          return endpointOf(await read());
        } catch (err) {
          // Nothing was sent: the caller refunds and answers 502, like any carrier outage.
          throw new CarrierError('The Twilio credentials could not be read', { retryable: true }, { cause: err });
        }
      };
    } else {
      const fixed = endpointOf(config);
      this.#endpoint = async () => fixed;
    }
    this.#statusCallbackUrl = config.statusCallbackUrl;
    this.#timeoutMs = config.timeoutMs ?? 10_000;
  }

  async send(text: OutboundText): Promise<CarrierReceipt> {
    const form = new URLSearchParams({ To: text.to, From: text.from, Body: text.body });
    if (this.#statusCallbackUrl) form.set('StatusCallback', this.#statusCallbackUrl);
    const endpoint = await this.#endpoint();
    let response: Response;
    try {
      response = await fetch(endpoint.url, {
        method: 'POST',
        headers: {
          Authorization: endpoint.authorization,
          'Content-Type': 'application/x-www-form-urlencoded',
          Accept: 'application/json',
        },
        body: form.toString(),
        redirect: 'error',
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
    } catch (err) {
      const timedOut = (err as Error)?.name === 'TimeoutError';
      throw new CarrierError(timedOut ? 'Twilio did not answer in time' : 'Twilio could not be reached', { retryable: true }, { cause: err });
    }
    const payload = (await response.json().catch(() => undefined)) as (TwilioMessage & TwilioErrorBody) | undefined;
    if (!response.ok) {
      const providerCode = typeof payload?.code === 'number' ? payload.code : undefined;
      throw new CarrierError(`Twilio refused the message: HTTP ${response.status}${providerCode ? `, error ${providerCode}` : ''}`, {
        httpStatus: response.status,
        providerCode,
        retryable: response.status === 429 || response.status >= 500,
      });
    }
    if (typeof payload?.sid !== 'string' || payload.sid === '') {
      throw new CarrierError('Twilio accepted the message but returned no sid', { httpStatus: response.status, retryable: false });
    }
    return { messageSid: payload.sid };
  }
}

/**
 * Twilio's message statuses in this service's terms, for the status callback: undefined for
 * statuses that say nothing new (accepted, queued, sending...), which the caller ignores.
 */
export function deliveryStatusOfTwilio(status: string): DeliveryStatus | undefined {
  switch (status) {
    case 'sent':
      return 'sent';
    case 'delivered':
    case 'read':
      return 'delivered';
    case 'failed':
    case 'undelivered':
    case 'canceled':
      return 'failed';
    default:
      return undefined;
  }
}
