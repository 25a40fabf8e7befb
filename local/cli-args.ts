import { parseArgs } from 'node:util';
import { LOCAL_TWILIO_AUTH_TOKEN, normalizePublicBaseUrl } from '../lambdas/contexts/carrier/callback-config';
import { SETTLEMENT_GRACE_MS } from '../lambdas/contexts/texting/settlement-grace';
import { DEFAULT_BACKOFF_BASE_MS } from '../lambdas/contexts/webhooks/backoff';
import { DEFAULT_ATTEMPT_TIMEOUT_MS } from '../lambdas/contexts/webhooks/http-post';
import {
  DEFAULT_CALLBACK_LIMIT_PER_ADDRESS,
  DEFAULT_CALLBACK_THROTTLE,
} from '../lambdas/contexts/carrier/callback-protection';
import type { CallbackGateSettings } from './carrier-callback-gate';
import type { BudgetRates } from './dynamodb-limits/budgets';
import { DEFAULT_BUDGETS, DEFAULT_TRANSACTION_HOLD_MS } from './dynamodb-limits/limits-proxy';
import { UsageError } from './usage-error';

/** What `npm start -- ...` accepts; see RUNTIME_USAGE for the meaning of each option. */
export type RuntimeOptions = {
  port: number;
  stateDir: string;
  inMemory: boolean;
  dynamodbEndpoint: string | undefined;
  authorizerCacheTtlSeconds: number;
  rateLimitPerKey: number;
  rateLimitPerNetwork: number;
  /** Stop when this process ends (a test harness that may die without stopping us). */
  stopWithPid: number | undefined;
  /** First webhook retry wait; later waits double, capped at 60 x this (spec: one minute). */
  webhookBackoffMs: number;
  /** How long one webhook attempt may take (spec: 10 s); shorter only to test slow receivers quickly. */
  webhookTimeoutMs: number;
  /** Local development only: webhook targets may be http and loopback addresses. */
  allowHttpWebhooks: boolean;
  /** How long a text's carrier outcome may stay unknown before the sweep fails and refunds it. */
  textGraceMs: number;
  /** How often the firing of scheduled texts runs. */
  scheduledTextsEveryMs: number;
  /** Tests only: the firing's clock runs this far ahead of the real one. */
  scheduledTextsLeadMs: number;
  /** The token carrier callbacks are signed with; undefined: TWILIO_AUTH_TOKEN, else LOCAL_TWILIO_AUTH_TOKEN. */
  twilioAuthToken: string | undefined;
  /** The API root as the carrier calls it (signatures cover it); undefined: http://127.0.0.1:<port>. */
  publicUrl: string | undefined;
  /** What the handlers' logger prints besides the access lines (Powertools' log level). */
  logLevel: LogLevel;
  /** The edge rules and throttle of the callback paths, as the stack configures them in AWS. */
  carrierCallbacks: CallbackGateSettings;
  /**
   * `--dynamodb-limits`: the handlers reach DynamoDB Local through the limits-faithful engine (docs/local-engine.md).
   */
  dynamodbLimits: DynamodbLimitsSettings | undefined;
};

export type DynamodbLimitsSettings = { transactionHoldMs: number; budgets: BudgetRates; replicaLagMs?: number };

/** `error` by default: one access line per request, and the errors of a request that failed. */
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const DEFAULT_LOG_LEVEL: LogLevel = 'error';

export const DEFAULT_PORT = 3000;
export const DEFAULT_STATE_DIR = '.local';
export const DEFAULT_AUTHORIZER_CACHE_TTL_SECONDS = 300;
/** API Gateway accepts authorizer cache TTLs up to one hour. */
const MAX_AUTHORIZER_CACHE_TTL_SECONDS = 3600;
/** Spec section 8: requests per key and minute, and per client network (IPv6 /64) and minute before authentication. */
export const DEFAULT_RATE_LIMIT_PER_KEY = 120;
export const DEFAULT_RATE_LIMIT_PER_NETWORK = 600;
/** A day: any longer and a wait is a typo, not a test setting. */
const MAX_WEBHOOK_MS = 86_400_000;

export const RUNTIME_USAGE = `Usage: npm start -- [options]

Serves the v1 API at http://127.0.0.1:<port>/api/v1 over DynamoDB Local (needs Java 17+).

Options:
  --port <n>                     HTTP port (default ${DEFAULT_PORT}; 0 picks a free one)
  --state-dir <dir>              Where runtime.json and the data (<dir>/data) live (default ${DEFAULT_STATE_DIR})
  --in-memory                    Keep no data: every start begins empty with a new demo key
  --dynamodb-endpoint <url>      Use a DynamoDB Local already running there instead of starting one
  --authorizer-cache-ttl <sec>   How long an authorizer decision is reused, like API Gateway's
                                 authorizer cache (default ${DEFAULT_AUTHORIZER_CACHE_TTL_SECONDS}; 0 disables; max ${MAX_AUTHORIZER_CACHE_TTL_SECONDS}).
                                 The operator CLI flushes it when it revokes or rotates a key or changes a
                                 plan; a change made to the table otherwise waits for the decision to expire.
  --rate-limit-per-key <n>       Requests per API key and minute (default ${DEFAULT_RATE_LIMIT_PER_KEY}; 0 disables)
  --rate-limit-per-network <n>   Requests per client network and minute before authentication, like the
                                 WAF rule in AWS (default ${DEFAULT_RATE_LIMIT_PER_NETWORK}; 0 disables)
  --stop-with-pid <pid>          Stop when process <pid> ends, as if sent SIGTERM (for test harnesses and
                                 supervisors that may die without stopping the runtime)
  --log-level <level>            What the handlers log besides one access line per request (method, path,
                                 status, ms, request id): ${LOG_LEVELS.join(', ')} (default ${DEFAULT_LOG_LEVEL})
  -h, --help                     Show this help

Webhooks (the same router and sender code as in AWS, fed from DynamoDB Local's stream):
  --webhook-backoff-ms <n>       First retry wait after a failed delivery (default ${DEFAULT_BACKOFF_BASE_MS}); later waits
                                 double and the cap (60 x this) scales with it: 8 attempts in all
  --webhook-timeout-ms <n>       Time one delivery attempt may take (default ${DEFAULT_ATTEMPT_TIMEOUT_MS}, the spec's 10 s)
  --allow-http-webhooks          Local development only: allow http targets and loopback addresses
                                 (a receiver on this machine); the host must still be approved

Texts:
  --text-grace-ms <n>            How long a text's carrier outcome may stay unknown (no answer, no status
                                 callback) before the settlement sweep fails and refunds it (default
                                 ${SETTLEMENT_GRACE_MS}, one hour, as in AWS); the sweep runs every minute or
                                 every quarter of this, whichever is shorter
  --scheduled-texts-every-ms <n> How often scheduled texts that fell due are sent (default 10000; each
                                 goes out within a minute after its sendAt as long as this is under 60000)
  --scheduled-texts-lead-ms <n>  Tests only: fire scheduled texts this much before their sendAt
                                 (default 0), so a test need not wait for a text scheduled a minute ahead

DynamoDB limits (docs/local-engine.md):
  --dynamodb-limits              Put the limits-faithful engine in front of DynamoDB Local: conflicting
                                 transactions are cancelled, hot partitions and items throttled, and
                                 capacity is counted as AWS charges it (meters at <engine>/__limits/stats)
  --transaction-hold-ms <n>      How long a transaction, written or read, holds its items (default ${DEFAULT_TRANSACTION_HOLD_MS})
  --partition-write-units <n>    Write units per second per partition-key value, of the table and of each
                                 index (default ${DEFAULT_BUDGETS.partitionWriteUnits}; 0 disables)
  --item-write-units <n>         Write units per second per item (default ${DEFAULT_BUDGETS.itemWriteUnits}; 0 disables)
  --partition-read-units <n>     Read units per second per partition-key value and per item (default
                                 ${DEFAULT_BUDGETS.partitionReadUnits}; 0 disables). A key's reads and writes share
                                 one budget (at the defaults a write unit costs 3 read units)
  --replica-lag-ms <n>           How long an eventually consistent read or an index query may miss a write,
                                 as AWS's replicas do (default 0: every read sees every write)

Carrier callbacks (POST /carrier/twilio/..., signed with X-Twilio-Signature):
  --twilio-auth-token <token>    The token signatures are checked with (default: the TWILIO_AUTH_TOKEN
                                 environment variable, else the local default "${LOCAL_TWILIO_AUTH_TOKEN}",
                                 which \`npm run admin -- simulate ...\` also uses). Prefer the environment
                                 variable for a real token: command lines are visible to other users
  --public-url <url>             The URL the carrier calls this runtime by, which signatures cover (default
                                 http://127.0.0.1:<port>; set it when a tunnel or proxy is in front).
                                 Required with CARRIER=twilio (real texts from TWILIO_ACCOUNT_SID and
                                 TWILIO_AUTH_TOKEN): each text's status callback goes to
                                 <url>/carrier/twilio/sms/status, as the stack sets it in AWS
  --callback-rate-limit <n>      Each callback path's throttle, requests per second for all callers, like the
                                 stage throttle in AWS (default ${DEFAULT_CALLBACK_THROTTLE.rateLimit}; 0 disables)
  --callback-burst-limit <n>     That throttle's burst (default ${DEFAULT_CALLBACK_THROTTLE.burstLimit})
  --callback-limit-per-address <n>
                                 Callback requests per client address and minute, like the WAF rule in AWS
                                 (default ${DEFAULT_CALLBACK_LIMIT_PER_ADDRESS}; 0 disables). Requests without a well-formed
                                 X-Twilio-Signature are refused (403) before any limit counts them`;

const OPTIONS = {
  port: { type: 'string' },
  'state-dir': { type: 'string' },
  'in-memory': { type: 'boolean' },
  'dynamodb-endpoint': { type: 'string' },
  'authorizer-cache-ttl': { type: 'string' },
  'rate-limit-per-key': { type: 'string' },
  'rate-limit-per-network': { type: 'string' },
  'stop-with-pid': { type: 'string' },
  'webhook-backoff-ms': { type: 'string' },
  'webhook-timeout-ms': { type: 'string' },
  'allow-http-webhooks': { type: 'boolean' },
  'text-grace-ms': { type: 'string' },
  'scheduled-texts-every-ms': { type: 'string' },
  'scheduled-texts-lead-ms': { type: 'string' },
  'twilio-auth-token': { type: 'string' },
  'public-url': { type: 'string' },
  'log-level': { type: 'string' },
  'callback-rate-limit': { type: 'string' },
  'callback-burst-limit': { type: 'string' },
  'callback-limit-per-address': { type: 'string' },
  'dynamodb-limits': { type: 'boolean' },
  'transaction-hold-ms': { type: 'string' },
  'partition-write-units': { type: 'string' },
  'item-write-units': { type: 'string' },
  'partition-read-units': { type: 'string' },
  'replica-lag-ms': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

const MAX_RATE_LIMIT = 1_000_000;

function wholeNumberOption(values: Record<string, unknown>, name: string, fallback: number, max: number): number {
  const raw = values[name];
  if (raw === undefined) return fallback;
  if (typeof raw !== 'string' || !/^\d+$/.test(raw) || Number(raw) > max)
    throw new UsageError(`--${name}: must be a whole number from 0 to ${max}`);
  return Number(raw);
}

function parseEndpoint(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`--dynamodb-endpoint: must be a URL such as http://127.0.0.1:8000`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError('--dynamodb-endpoint: must be an http or https URL');
  return url.origin;
}

function parsePublicUrl(raw: string): string {
  try {
    // A path is allowed: a proxy that strips its own prefix before forwarding here still signs with it.
    return normalizePublicBaseUrl(raw);
  } catch (err) {
    throw new UsageError(`--public-url: ${(err as Error).message.replace(/^PUBLIC_BASE_URL /, '')}`);
  }
}

/** A positive number of milliseconds (0 would make retries or attempts meaningless). */
function positiveMs(values: Record<string, unknown>, name: string, fallback: number): number {
  const ms = wholeNumberOption(values, name, fallback, MAX_WEBHOOK_MS);
  if (ms === 0) throw new UsageError(`--${name}: must be at least 1`);
  return ms;
}

function callbackGateSettings(values: Record<string, unknown>): CallbackGateSettings {
  const rateLimit = wholeNumberOption(
    values,
    'callback-rate-limit',
    DEFAULT_CALLBACK_THROTTLE.rateLimit,
    MAX_RATE_LIMIT,
  );
  const burstLimit = wholeNumberOption(
    values,
    'callback-burst-limit',
    Math.max(DEFAULT_CALLBACK_THROTTLE.burstLimit, rateLimit),
    MAX_RATE_LIMIT,
  );
  // As the stack refuses it at synth: a bucket smaller than a second's refill would cap the rate below itself.
  if (burstLimit < rateLimit)
    throw new UsageError(`--callback-burst-limit: must be at least --callback-rate-limit (${rateLimit})`);
  const limitPerMinutePerAddress = wholeNumberOption(
    values,
    'callback-limit-per-address',
    DEFAULT_CALLBACK_LIMIT_PER_ADDRESS,
    MAX_RATE_LIMIT,
  );
  return { rateLimit, burstLimit, limitPerMinutePerAddress };
}

const LIMITS_OPTIONS = [
  'transaction-hold-ms',
  'partition-write-units',
  'item-write-units',
  'partition-read-units',
  'replica-lag-ms',
] as const;

/** A minute: a longer hold would only stall every test and request that meets it. */
const MAX_TRANSACTION_HOLD_MS = 60_000;

function dynamodbLimitsSettings(values: Record<string, unknown>): DynamodbLimitsSettings | undefined {
  if (!values['dynamodb-limits']) {
    const stray = LIMITS_OPTIONS.find((name) => values[name] !== undefined);
    if (stray) throw new UsageError(`--${stray}: only applies with --dynamodb-limits`);
    return undefined;
  }
  const partitionWriteUnits = wholeNumberOption(
    values,
    'partition-write-units',
    DEFAULT_BUDGETS.partitionWriteUnits,
    MAX_RATE_LIMIT,
  );
  const partitionReadUnits = wholeNumberOption(
    values,
    'partition-read-units',
    DEFAULT_BUDGETS.partitionReadUnits,
    MAX_RATE_LIMIT,
  );
  return {
    transactionHoldMs: wholeNumberOption(
      values,
      'transaction-hold-ms',
      DEFAULT_TRANSACTION_HOLD_MS,
      MAX_TRANSACTION_HOLD_MS,
    ),
    budgets: {
      partitionWriteUnits,
      indexPartitionWriteUnits: partitionWriteUnits,
      itemWriteUnits: wholeNumberOption(values, 'item-write-units', DEFAULT_BUDGETS.itemWriteUnits, MAX_RATE_LIMIT),
      partitionReadUnits,
      itemReadUnits: partitionReadUnits,
    },
    ...(values['replica-lag-ms'] !== undefined && {
      replicaLagMs: wholeNumberOption(values, 'replica-lag-ms', 0, MAX_TRANSACTION_HOLD_MS),
    }),
  };
}

function parseOrUsageError(argv: string[]) {
  try {
    return parseArgs({ args: argv, options: OPTIONS, strict: true, allowPositionals: false });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

function parseLogLevel(raw: string | undefined): LogLevel {
  if (raw === undefined) return DEFAULT_LOG_LEVEL;
  const level = LOG_LEVELS.find((l) => l === raw.toLowerCase());
  if (!level) throw new UsageError(`--log-level: must be one of ${LOG_LEVELS.join(', ')}`);
  return level;
}

export function parseRuntimeArgs(argv: string[]): { help: true } | { help: false; options: RuntimeOptions } {
  const { values } = parseOrUsageError(argv);
  if (values.help) return { help: true };
  const dynamodbEndpoint =
    values['dynamodb-endpoint'] === undefined ? undefined : parseEndpoint(values['dynamodb-endpoint']);
  if (dynamodbEndpoint && values['in-memory']) {
    // Persistence belongs to whoever runs that DynamoDB Local; accepting the flag would promise something we cannot do.
    throw new UsageError(
      '--in-memory cannot be combined with --dynamodb-endpoint: that DynamoDB Local decides whether data is kept',
    );
  }
  if (values['state-dir'] === '') throw new UsageError('--state-dir: must not be empty');
  if (values['twilio-auth-token'] === '') throw new UsageError('--twilio-auth-token: must not be empty');
  return {
    help: false,
    options: {
      port: wholeNumberOption(values, 'port', DEFAULT_PORT, 65535),
      stateDir: values['state-dir'] ?? DEFAULT_STATE_DIR,
      inMemory: values['in-memory'] ?? false,
      dynamodbEndpoint,
      authorizerCacheTtlSeconds: wholeNumberOption(
        values,
        'authorizer-cache-ttl',
        DEFAULT_AUTHORIZER_CACHE_TTL_SECONDS,
        MAX_AUTHORIZER_CACHE_TTL_SECONDS,
      ),
      rateLimitPerKey: wholeNumberOption(values, 'rate-limit-per-key', DEFAULT_RATE_LIMIT_PER_KEY, MAX_RATE_LIMIT),
      rateLimitPerNetwork: wholeNumberOption(
        values,
        'rate-limit-per-network',
        DEFAULT_RATE_LIMIT_PER_NETWORK,
        MAX_RATE_LIMIT,
      ),
      stopWithPid:
        values['stop-with-pid'] === undefined ? undefined : wholeNumberOption(values, 'stop-with-pid', 0, 2 ** 31 - 1),
      webhookBackoffMs: positiveMs(values, 'webhook-backoff-ms', DEFAULT_BACKOFF_BASE_MS),
      webhookTimeoutMs: positiveMs(values, 'webhook-timeout-ms', DEFAULT_ATTEMPT_TIMEOUT_MS),
      allowHttpWebhooks: values['allow-http-webhooks'] ?? false,
      textGraceMs: positiveMs(values, 'text-grace-ms', SETTLEMENT_GRACE_MS),
      scheduledTextsEveryMs: positiveMs(values, 'scheduled-texts-every-ms', 10_000),
      scheduledTextsLeadMs: wholeNumberOption(values, 'scheduled-texts-lead-ms', 0, MAX_WEBHOOK_MS),
      twilioAuthToken: values['twilio-auth-token'],
      publicUrl: values['public-url'] === undefined ? undefined : parsePublicUrl(values['public-url']),
      logLevel: parseLogLevel(values['log-level']),
      carrierCallbacks: callbackGateSettings(values),
      dynamodbLimits: dynamodbLimitsSettings(values),
    },
  };
}
