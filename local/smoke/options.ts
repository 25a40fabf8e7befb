import { parseArgs } from 'node:util';
import { DEFAULT_STATE_DIR } from '../cli-args';
import { UsageError } from '../usage-error';

/** What `npm run smoke -- ...` accepts; SMOKE_USAGE says what each option means. */
export type SmokeOptions = {
  /** `{base_url}`, with `/api/v1` and without a trailing slash. */
  baseUrl: string;
  key: string;
  /** An endpoint of the key's organization (its URL or id) to send a signed `webhook.test` event to. */
  webhookEndpoint: string | undefined;
  /** Where the operator side of the webhook check finds the table: as `npm run admin` does. */
  operator: { stateDir: string; stack: string | undefined; region: string | undefined };
  json: boolean;
  /** Per request, so that a hung deployment fails the run instead of stalling it. */
  timeoutMs: number;
};

export const SMOKE_USAGE = `Usage: npm run smoke -- --url <base_url> --key <api key> [options]

A read-mostly end-to-end check of the public v1 contract against any deployment: the local runtime
(http://127.0.0.1:3000/api/v1), a deployed stage (the ApiBaseUrl output) or a custom domain. It calls
every endpoint, validates every answer against the OpenAPI document the deployment serves, and checks
error shapes, an encoded path parameter and the rate-limit headers. It creates one contact, marked with
the run's id, and deletes it again; it never sends a text (POST /messages is checked with a body that
fails validation). Prints one line per check; exit 0 all passed, 1 a check failed, 2 called wrongly.

Options:
  --url <base_url>               The API's base URL, ending in /api/v1 (required)
  --key <api key>                An API key (required; or the SMOKE_API_KEY environment variable, which
                                 keeps the key out of the shell history and the process list). A key
                                 lacking a scope is fine: those routes must then answer 403
  --webhook-endpoint <url|id>    Also send a signed webhook.test event to this endpoint of the key's
                                 organization (registered with \`npm run admin -- webhook add\`) and
                                 check that the first attempt succeeded. Needs operator access, as
                                 \`npm run admin\` has it:
    --state-dir <dir>            the local runtime's state directory (default ${DEFAULT_STATE_DIR}), or
    --stack <name> [--region <r>]  a deployed stack (your usual AWS credentials)
  --json                         Print one JSON document instead of lines
  --timeout-ms <n>               Time one request may take (default 15000)
  -h, --help                     Show this help`;

const OPTIONS = {
  url: { type: 'string' },
  key: { type: 'string' },
  'webhook-endpoint': { type: 'string' },
  'state-dir': { type: 'string' },
  stack: { type: 'string' },
  region: { type: 'string' },
  json: { type: 'boolean' },
  'timeout-ms': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Returns undefined for --help; throws UsageError on anything it cannot run with. */
export function parseSmokeOptions(argv: string[], env: NodeJS.ProcessEnv = process.env): SmokeOptions | undefined {
  let values;
  try {
    ({ values } = parseArgs({ args: argv, options: OPTIONS, strict: true, allowPositionals: false }));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (values.help) return undefined;
  const url = values.url;
  if (!url) throw new UsageError('--url is required (the base URL, ending in /api/v1)');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`--url: "${url}" is not a URL`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new UsageError('--url must be http or https');
  if (parsed.search || parsed.hash) throw new UsageError('--url takes no query or fragment');
  const baseUrl = parsed.href.replace(/\/+$/, '');
  if (!baseUrl.endsWith('/api/v1'))
    throw new UsageError(`--url must end in /api/v1 (the spec's {base_url}), got ${baseUrl}`);
  const key = values.key ?? env.SMOKE_API_KEY;
  if (!key) throw new UsageError('--key (or SMOKE_API_KEY) is required');
  const timeoutMs = values['timeout-ms'] === undefined ? 15_000 : Number(values['timeout-ms']);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1)
    throw new UsageError('--timeout-ms must be a positive whole number of milliseconds');
  const webhookEndpoint = values['webhook-endpoint'];
  const operatorGiven = values['state-dir'] !== undefined || values.stack !== undefined || values.region !== undefined;
  if (operatorGiven && webhookEndpoint === undefined)
    throw new UsageError('--state-dir, --stack and --region only go with --webhook-endpoint');
  if (values.region !== undefined && values.stack === undefined) throw new UsageError('--region goes with --stack');
  return {
    baseUrl,
    key,
    webhookEndpoint,
    operator: { stateDir: values['state-dir'] ?? DEFAULT_STATE_DIR, stack: values.stack, region: values.region },
    json: values.json ?? false,
    timeoutMs,
  };
}
