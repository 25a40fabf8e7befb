import { z } from 'zod';
import { API_PREFIX } from '../../lambdas/handlers/http/route-spec';
import { LOCAL_TWILIO_AUTH_TOKEN } from '../../lambdas/contexts/carrier/callback-config';
import { computeTwilioSignature } from '../../lambdas/contexts/carrier/signature';
import { DEFAULT_STATE_DIR } from '../cli-args';
import { isProcessAlive, readRuntimeInfo } from '../runtime-file';
import type { CallbackPost } from './carrier-sequences';
import { option } from './options';
import type { CommandContext, OptionSpecs } from './registry';

/**
 * How the `simulate` commands reach the runtime: where they post, what they sign with, and the
 * organization's number the traffic reaches. The callbacks are signed like Twilio signs them
 * (X-Twilio-Signature over the public URL and the sorted form fields), so the runtime checks them
 * exactly as it checks the provider's. Only modules that touch no table are imported at the top.
 */

export type PostResult = { status: number; body: string };

/**
 * POSTs one form-encoded callback to `baseUrl + path`, signed over `publicUrl + path` as Twilio
 * signs the URL it was configured with (the runtime checks against its own public URL).
 */
export async function postSignedCallback(
  baseUrl: string,
  path: string,
  params: Record<string, string>,
  authToken: string,
  publicUrl: string,
): Promise<PostResult> {
  const response = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      'X-Twilio-Signature': computeTwilioSignature(`${publicUrl}${path}`, params, authToken),
    },
    body: new URLSearchParams(params).toString(),
    redirect: 'error',
    signal: AbortSignal.timeout(10_000),
  });
  return { status: response.status, body: await response.text() };
}

export type CallbackTarget = { baseUrl: string; publicUrl: string; authToken: string };

/** Posts each callback in order; any answer but 200 stops the sequence with an operator's explanation. */
export async function postCallbacks(target: CallbackTarget, posts: readonly CallbackPost[]): Promise<void> {
  for (const post of posts) {
    const search = new URLSearchParams(post.query ?? {}).toString();
    const path = `${post.route.path}${search ? `?${search}` : ''}`;
    const { status } = await postSignedCallback(target.baseUrl, path, post.params, target.authToken, target.publicUrl);
    if (status === 403) {
      throw new Error(
        `${post.route.path} refused the signature (403): pass the runtime's --twilio-auth-token and --public-url to ` +
          `this command`,
      );
    }
    if (status !== 200) throw new Error(`${post.route.path} answered ${status}`);
  }
}

export type TargetInput = { callbackUrl?: string; publicUrl?: string; authToken?: string; stateDir?: string };

const CUSTOM_TOKEN_HELP =
  'The local runtime checks callbacks with its own --twilio-auth-token (runtime.json records only that it is not the ' +
  'default): ' +
  'give this command the same token with --twilio-auth-token or the TWILIO_AUTH_TOKEN environment variable';

/**
 * The running local runtime (runtime.json) unless `--callback-url` names another root (a deployed
 * stage, with its real token). The signature is made over `--public-url` (default: the runtime's
 * recorded public URL, else where it is posted) with `--twilio-auth-token` (default: the
 * TWILIO_AUTH_TOKEN environment variable, else the local runtime's documented default, unless
 * runtime.json says the runtime was given another token, which it never records).
 */
export async function resolveCallbackTarget(input: TargetInput): Promise<CallbackTarget> {
  let baseUrl = input.callbackUrl;
  let recorded: { publicBaseUrl?: string; twilioAuthToken?: string } = {};
  if (!baseUrl) {
    const stateDir = input.stateDir ?? DEFAULT_STATE_DIR;
    const info = await readRuntimeInfo(stateDir);
    if (!info || !isProcessAlive(info.pid))
      throw new Error(
        `No running local runtime recorded in ${stateDir}: start one with \`npm start\`, or pass --callback-url`,
      );
    baseUrl = info.apiBaseUrl.endsWith(API_PREFIX) ? info.apiBaseUrl.slice(0, -API_PREFIX.length) : info.apiBaseUrl;
    recorded = info;
  }
  const fromEnv = process.env.TWILIO_AUTH_TOKEN === '' ? undefined : process.env.TWILIO_AUTH_TOKEN;
  const authToken = input.authToken ?? fromEnv;
  if (authToken === undefined && recorded.twilioAuthToken === 'custom') throw new Error(CUSTOM_TOKEN_HELP);
  const strip = (url: string) => url.replace(/\/+$/, '');
  return {
    baseUrl: strip(baseUrl),
    publicUrl: strip(input.publicUrl ?? recorded.publicBaseUrl ?? baseUrl),
    authToken: authToken ?? LOCAL_TWILIO_AUTH_TOKEN,
  };
}

/**
 * The target of a simulate command run by the CLI: the local runtime whose table the CLI works
 * on, or `--callback-url`. Working on another table (a deployed stack) while posting to a local
 * runtime would store the callbacks' rows where the command never looks.
 */
export function callbackTargetIn(target: TargetInput, context: CommandContext): TargetInput {
  if (!target.callbackUrl && !context.runtime) {
    throw new Error(
      "Not working on the local runtime's table: pass --callback-url <the stack's root URL> (and its Twilio auth " +
        'token)',
    );
  }
  return { stateDir: context.stateDir, ...target };
}

// ---------- the options every simulate command takes ----------

export const TARGET_OPTIONS = {
  'callback-url': { type: 'string' },
  'public-url': { type: 'string' },
  'twilio-auth-token': { type: 'string' },
} as const satisfies OptionSpecs;

export const TARGET_USAGE = '[--callback-url <url>] [--public-url <url>] [--twilio-auth-token <token>]';

const url = z.url({ protocol: /^https?$/, error: 'must be an http or https URL' });
export const targetFields = {
  'callback-url': url.optional(),
  'public-url': url.optional(),
  'twilio-auth-token': option.text.optional(),
};

type TargetValues = { 'callback-url'?: string; 'public-url'?: string; 'twilio-auth-token'?: string };
export const targetOf = (o: TargetValues): TargetInput => ({
  callbackUrl: o['callback-url'],
  publicUrl: o['public-url'],
  authToken: o['twilio-auth-token'],
});

/** The organization and the number the simulated carrier traffic reaches (its first, or its SMS number). */
export async function organizationNumber(
  tenantId: string,
  given: string | undefined,
  kind: 'voice' | 'sms',
): Promise<string> {
  const { getTenant } = await import('../../lambdas/contexts/tenants/tenants');
  const tenant = await getTenant(tenantId);
  if (!tenant) throw new Error(`No organization with id ${tenantId}`);
  const number = given ?? (kind === 'sms' ? (tenant.smsNumber ?? tenant.numbers[0]) : tenant.numbers[0]);
  if (!number)
    throw new Error(`The organization has no number: add one with \`tenant update ${tenantId} --number <e164>\``);
  if (!tenant.numbers.includes(number))
    throw new Error(`${number} is not one of the organization's numbers (${tenant.numbers.join(', ') || 'none'})`);
  return number;
}
