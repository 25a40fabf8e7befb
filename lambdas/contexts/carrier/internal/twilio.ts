import {
  CARRIER_SEND_TIMEOUT_MS,
  CarrierError,
  type Carrier,
  type CarrierReceipt,
  type OutboundText,
} from '../../texting/carrier-port';
import type { DeliveryStatus } from '../../texting/delivery-status';
import { withConnectionOverrides } from '../callback-protection';
import { twilioErrorMessage } from './twilio-errors';

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
  /**
   * Where Twilio posts status changes of each message; omitted when not configured. Each text's
   * URL also carries its message id (`messageId`), so a status callback settles the message even
   * when the send's answer was lost.
   */
  statusCallbackUrl?: string;
  /** The whole request, connect to last byte; default `TWILIO_SEND_TIMEOUT_MS`. */
  timeoutMs?: number;
};

/**
 * The send's bound: well inside the send function's 10 s timeout (which leaves room for the
 * table writes before and after it) and so inside API Gateway's 29 s. A send that hits it is an
 * unknown outcome, never a failure (../../texting/carrier-port.ts).
 */
export const TWILIO_SEND_TIMEOUT_MS = CARRIER_SEND_TIMEOUT_MS;

/** The query parameter of the StatusCallback URL that names our message. */
export const MESSAGE_ID_PARAM = 'messageId';

/** Twilio's error for a recipient who replied STOP (its blocklist): "Attempt to send to unsubscribed recipient". */
export const TWILIO_OPTED_OUT_CODE = 21610;

/**
 * Network errors that prove the request never reached Twilio: no connection was made, or the
 * TLS handshake failed before a byte of the request was sent. Anything else (a reset, a timeout,
 * "other side closed") may have come after Twilio read the request.
 */
const NEVER_CONNECTED = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** Answers that say Twilio created no message and would accept the same request later. */
const NOT_SENT_STATUSES = new Set([401, 403, 429]);

function networkCodeOf(err: unknown): string | undefined {
  for (let cause: unknown = err; cause; cause = (cause as { cause?: unknown }).cause) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

/**
 * The StatusCallback URL of one text: the configured URL plus our message id, and Twilio's
 * connection overrides (retries) as its fragment unless the configured URL brings its own.
 */
export function statusCallbackUrlFor(base: string, messageId: string): string {
  const url = new URL(base);
  url.searchParams.set(MESSAGE_ID_PARAM, messageId);
  return withConnectionOverrides(url.toString());
}

type TwilioMessage = { sid?: unknown };
type TwilioErrorBody = { code?: unknown; message?: unknown };
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
          throw new CarrierError('The Twilio credentials could not be read', { kind: 'not_sent' }, { cause: err });
        }
      };
    } else {
      const fixed = endpointOf(config);
      this.#endpoint = async () => fixed;
    }
    this.#statusCallbackUrl = config.statusCallbackUrl;
    this.#timeoutMs = config.timeoutMs ?? TWILIO_SEND_TIMEOUT_MS;
  }

  async send(text: OutboundText): Promise<CarrierReceipt> {
    const form = new URLSearchParams({ To: text.to, From: text.from, Body: text.body });
    if (this.#statusCallbackUrl)
      form.set('StatusCallback', statusCallbackUrlFor(this.#statusCallbackUrl, text.messageId));
    const endpoint = await this.#endpoint();
    const response = await postMessage(endpoint, form, this.#timeoutMs);
    const payload = await payloadOf(response);
    if (!response.ok) throw refusalOf(response.status, payload);
    if (typeof payload?.sid !== 'string' || payload.sid === '') {
      throw new CarrierError('Twilio answered without a readable message sid', {
        kind: 'unknown',
        httpStatus: response.status,
      });
    }
    return { messageSid: payload.sid };
  }
}

/**
 * The Messages POST. A network failure is a CarrierError: `not_sent` when the request provably
 * never reached Twilio, else `unknown` (a timeout or a lost answer may follow an accepted text).
 */
async function postMessage(endpoint: Endpoint, form: URLSearchParams, timeoutMs: number): Promise<Response> {
  try {
    return await fetch(endpoint.url, {
      method: 'POST',
      headers: {
        Authorization: endpoint.authorization,
        'Content-Type': 'application/x-www-form-urlencoded',
        Accept: 'application/json',
      },
      body: form.toString(),
      redirect: 'error',
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    const timedOut = (err as Error)?.name === 'TimeoutError';
    const code = networkCodeOf(err);
    if (!timedOut && code && NEVER_CONNECTED.has(code)) {
      throw new CarrierError(`Twilio could not be reached (${code})`, { kind: 'not_sent' }, { cause: err });
    }
    throw new CarrierError(
      timedOut ? 'Twilio did not answer in time' : `Twilio's answer was lost (${code ?? 'network error'})`,
      { kind: 'unknown' },
      { cause: err },
    );
  }
}

/** The answer's JSON; undefined when the body cannot be read (reset mid-answer, timeout): an accepted text stays unknown. */
async function payloadOf(response: Response): Promise<(TwilioMessage & TwilioErrorBody) | undefined> {
  try {
    return (await response.json()) as TwilioMessage & TwilioErrorBody;
  } catch {
    return undefined;
  }
}

/** An HTTP error answer as the carrier port's outcome: 5xx unknown, 401/403/429 not sent, the rest refused. */
function refusalOf(status: number, payload: TwilioErrorBody | undefined): CarrierError {
  const providerCode = typeof payload?.code === 'number' ? payload.code : undefined;
  const kind = status >= 500 ? 'unknown' : NOT_SENT_STATUSES.has(status) ? 'not_sent' : 'refused';
  return new CarrierError(
    `Twilio ${kind === 'refused' ? 'refused' : 'did not take'} the message: HTTP ` +
      `${status}${providerCode ? `, error ${providerCode}` : ''}`,
    {
      kind,
      httpStatus: status,
      providerCode,
      providerMessage: twilioErrorMessage(providerCode, payload?.message),
      ...(providerCode === TWILIO_OPTED_OUT_CODE && { recipientOptedOut: true }),
    },
  );
}

/** Whether a status callback's `ErrorCode` says the recipient opted out. */
export const isOptedOutCode = (errorCode: string | undefined): boolean => errorCode === String(TWILIO_OPTED_OUT_CODE);

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
