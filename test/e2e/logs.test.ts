import { routes } from '../../lambdas/handlers/api/routes';
import type { RouteSpec } from '../../lambdas/handlers/http/route-spec';
import { functionNameOf } from '../../local/server';
import type { ApiResult } from './support/api';
import { useLocalRuntime } from './support/e2e';
import { pollUntil } from './support/poll';

/**
 * `--log-level debug`: the handlers' Powertools records, which name the function and invocation
 * they come from (`function_name`, `function_request_id`) from the Lambda context. The local
 * runtime runs every function in one process, requests side by side, so each record must still
 * name the function of its own request. (The default level, only access lines: runtime.test.ts.)
 */
const e2e = useLocalRuntime({ args: ['--log-level', 'debug'] });

/** The keys of a Powertools record this test reads. */
type LogRecord = { function_name?: string; function_request_id?: string; requestId?: string; message?: string };

const ROUNDS = 4;
/** The runtime's stage, as its functions are named (`cct-local-<operationId>`). */
const STAGE = 'local';

/** One round: six functions of the route table, all requested at once. */
function round(index: number): { route: RouteSpec; send: () => Promise<ApiResult> }[] {
  const { api, runtime } = e2e;
  const key = runtime.demoKey;
  const contact = { displayName: `Round ${index}`, phoneNumber: `+1415555${String(2000 + index)}` };
  return [
    { route: routes.getMe, send: () => api.get('/me', key) },
    { route: routes.listContacts, send: () => api.get('/contacts', key) },
    { route: routes.createContact, send: () => api.post('/contacts', key, contact) },
    { route: routes.listCalls, send: () => api.get('/calls', key) },
    { route: routes.listThreads, send: () => api.get('/messages', key) },
    { route: routes.listMessages, send: () => api.get('/messages/%2B14155550100', key) },
  ];
}

/**
 * Every JSON line of the output: Powertools prints one record per line, debug and info on stdout, warn and error on
 * stderr.
 */
const records = (output: string): LogRecord[] =>
  output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogRecord);

const unique = <T>(values: T[]): T[] => [...new Set(values)];

describe('--log-level debug with requests to several functions at once', () => {
  /**
   * API Gateway's request id (the x-amzn-RequestId header, the records' `requestId`) -> the function that served it.
   */
  const functionOf = new Map<string, string>();
  let logged: LogRecord[];

  beforeAll(async () => {
    const stdoutFrom = e2e.runtime.stdout().length;
    const stderrFrom = e2e.runtime.stderr().length;
    for (let index = 0; index < ROUNDS; index += 1) {
      const requests = round(index);
      const responses = await Promise.all(requests.map(({ send }) => send()));
      // Answered, not failed: a logger that threw would have made a 500.
      expect(responses.map((response) => response.status)).toEqual(
        requests.map(({ route }) => (route.method === 'POST' ? 201 : 200)),
      );
      responses.forEach((response, at) =>
        functionOf.set(
          response.headers.get('x-amzn-requestid')!,
          functionNameOf(STAGE, requests[at].route.operationId),
        ),
      );
    }
    // A request's records are printed before its access line, which is printed after its response.
    const accessLines = await pollUntil(
      'an access line per request',
      () => e2e.runtime.stdout().slice(stdoutFrom),
      (out) => [...functionOf.keys()].every((requestId) => out.includes(` ${requestId}\n`)),
    );
    logged = records(accessLines + '\n' + e2e.runtime.stderr().slice(stderrFrom)).filter(
      (record) => record.function_name !== undefined,
    );
  });

  it('names in every record of a request the function that served it, in one invocation', () => {
    const byRequest = [...functionOf].map(([requestId, functionName]) => {
      const own = logged.filter((record) => record.requestId === requestId);
      return {
        requestId,
        names: unique(own.map((record) => record.function_name)),
        invocations: unique(own.map((record) => record.function_request_id)).length,
        expected: [functionName],
      };
    });

    expect(
      byRequest.filter(({ names, invocations, expected }) => invocations !== 1 || names.join() !== expected.join()),
    ).toEqual([]);
  });

  it('gives every record that names a function the request id of a request to that function', () => {
    const misplaced = logged.filter(
      (record) => record.requestId === undefined || functionOf.get(record.requestId) !== record.function_name,
    );

    expect(misplaced).toEqual([]);
  });

  it('keeps one function per invocation id', () => {
    const invocations = unique(logged.map((record) => record.function_request_id));
    const mixed = invocations
      .map((id) => ({
        id,
        names: unique(
          logged.filter((record) => record.function_request_id === id).map((record) => record.function_name),
        ),
      }))
      .filter(({ names }) => names.length !== 1);

    expect(invocations.length).toBe(functionOf.size);
    expect(mixed).toEqual([]);
  });
});
