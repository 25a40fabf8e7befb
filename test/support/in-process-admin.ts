import type { RuntimeInfo } from '../../local/runtime-file';

/**
 * The operator CLI run in the test's own process: `runAdmin` of local/admin/main.ts, the function
 * bin/admin.ts hands its arguments to, so the same parsing, command registry, JSON document and
 * exit code, without a second Node process (about half a second of CPU per call, and the e2e
 * files make dozens). What only a process shows (bin/admin.ts, signals) is left to the tests that
 * spawn it (`adminProcess`, `adminResult`).
 *
 * The domain modules the commands load read TABLE_NAME, DYNAMODB_ENDPOINT and the local engine's
 * access key once, when first imported, so a test file serves one table this way: a call for
 * another runtime's table is refused with an error rather than written to the wrong one.
 */
let servedTable: string | undefined;

/** What a run of the operator CLI ended with, in this process or as one. */
export type AdminResult = { code: number | null; stdout: string; stderr: string };

/**
 * The variables `applyTarget` (local/admin/target.ts) sets, put back once no call is running: runtimes spawned later
 * inherit this environment.
 */
const TARGET_VARIABLES = ['TABLE_NAME', 'DYNAMODB_ENDPOINT', 'AWS_REGION', 'POWERTOOLS_LOG_LEVEL'] as const;
let running = 0;
let saved: Record<string, string | undefined> = {};

export async function runAdminInProcess(stateDir: string, info: RuntimeInfo, args: string[]): Promise<AdminResult> {
  const table = `${info.tableName} at ${info.dynamodbEndpoint}`;
  servedTable ??= table;
  if (table !== servedTable) {
    throw new Error(
      `In-process admin of this test file serves ${servedTable}, not ${table}: run the CLI as a process ` +
        `(adminProcess) for a second runtime's table`,
    );
  }
  if (running === 0) saved = Object.fromEntries(TARGET_VARIABLES.map((name) => [name, process.env[name]]));
  running += 1;
  try {
    const { runAdmin } = await import('../../local/admin/main');
    const output = { stdout: '', stderr: '' };
    const code = await runAdmin(['--state-dir', stateDir, ...args], {
      stdout: (text) => (output.stdout += text),
      stderr: (text) => (output.stderr += text),
    });
    return { code, ...output };
  } finally {
    running -= 1;
    if (running === 0) {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  }
}
