import { isProcessAlive, LOCAL_TABLE_NAME, readRuntimeInfo, runtimeFilePath } from '../runtime-file';

/**
 * Which table the CLI works on: the running local runtime's (found through
 * `<state-dir>/runtime.json`) unless `--table-name` names one; with `--table-name` and no
 * `--dynamodb-endpoint` that is the AWS account and region of the usual credentials.
 */
export type Target = { tableName: string; endpoint: string | undefined };

export type TargetOptions = { stateDir: string; tableName?: string; endpoint?: string };

export async function resolveTarget({ stateDir, tableName, endpoint }: TargetOptions): Promise<Target> {
  if (tableName || endpoint) return { tableName: tableName ?? LOCAL_TABLE_NAME, endpoint };
  const info = await readRuntimeInfo(stateDir);
  const file = runtimeFilePath(stateDir);
  if (!info) throw new Error(`No local runtime found (${file} does not exist): start one with \`npm start\`, or pass --state-dir`);
  if (!isProcessAlive(info.pid)) {
    throw new Error(`The local runtime recorded in ${file} (pid ${info.pid}) is not running: start it with \`npm start\``);
  }
  return { tableName: info.tableName, endpoint: info.dynamodbEndpoint };
}

/** Points the domain modules at the target; they read these once, when first imported. */
export function applyTarget(target: Target): void {
  process.env.TABLE_NAME = target.tableName;
  if (target.endpoint) process.env.DYNAMODB_ENDPOINT = target.endpoint;
  else delete process.env.DYNAMODB_ENDPOINT;
  // stdout carries exactly one JSON document, so the domain's logger may only speak on stderr (warn and above).
  process.env.POWERTOOLS_LOG_LEVEL = 'WARN';
}
