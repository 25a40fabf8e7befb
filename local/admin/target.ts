import { isProcessAlive, LOCAL_TABLE_NAME, readRuntimeInfo, runtimeFilePath } from '../runtime-file';
import { deployedStackApi, type DeployedStackApi } from './aws-stack';

/**
 * Which table the CLI works on:
 *   --stack <name> [--region <r>]  a deployed stack: its table, API and API URL from the
 *                                  stack's outputs, with the usual AWS credential chain;
 *   --table-name [--dynamodb-endpoint <url>]  that table (without an endpoint: in AWS);
 *   otherwise                      the running local runtime's (`<state-dir>/runtime.json`).
 */
export type DeployedStack = {
  name: string;
  /** As given with --region; otherwise the SDK's usual region chain decides. */
  region: string | undefined;
  /** `{base_url}` of the deployed API (ApiBaseUrl output). */
  apiBaseUrl: string;
  /** The REST API and stage whose authorizer cache the commands that revoke access flush (ApiId, Stage outputs). */
  restApiId: string;
  stageName: string;
  /** What the AWS calls of the commands go through (the authorizer cache). */
  aws: DeployedStackApi;
};

export type Target = { tableName: string; endpoint: string | undefined; stack?: DeployedStack };

export type TargetOptions = {
  stateDir: string;
  tableName?: string;
  endpoint?: string;
  stack?: string;
  region?: string;
};

/** The outputs of `lib/service-stack.ts` the CLI needs. */
const REQUIRED_OUTPUTS = ['TableName', 'ApiBaseUrl', 'ApiId', 'Stage'] as const;

export async function resolveTarget(
  { stateDir, tableName, endpoint, stack, region }: TargetOptions,
  stackApi: (region: string | undefined) => DeployedStackApi = deployedStackApi,
): Promise<Target> {
  if (stack !== undefined) {
    if (tableName || endpoint)
      throw new Error('--stack finds the table itself: leave out --table-name and --dynamodb-endpoint');
    const found = await deployedStack(stack, region, stackApi(region));
    return { tableName: found.tableName, endpoint: undefined, stack: found.stack };
  }
  if (region !== undefined) throw new Error('--region goes with --stack');
  if (tableName || endpoint) return { tableName: tableName ?? LOCAL_TABLE_NAME, endpoint };
  const info = await readRuntimeInfo(stateDir);
  const file = runtimeFilePath(stateDir);
  if (!info)
    throw new Error(
      `No local runtime found (${file} does not exist): start one with \`npm start\`, or pass --state-dir`,
    );
  if (!isProcessAlive(info.pid)) {
    throw new Error(
      `The local runtime recorded in ${file} (pid ${info.pid}) is not running: start it with \`npm start\``,
    );
  }
  return { tableName: info.tableName, endpoint: info.dynamodbEndpoint };
}

/** A deployed stack of this service by its outputs, and its table. */
export async function deployedStack(
  name: string,
  region: string | undefined,
  aws: DeployedStackApi,
): Promise<{ tableName: string; stack: DeployedStack }> {
  const outputs = await aws.outputs(name);
  const missing = REQUIRED_OUTPUTS.filter((key) => !outputs[key]);
  if (missing.length > 0)
    throw new Error(
      `Stack ${name} has no output ${missing.join(', ')}: is it a stack of this service (CctService-<stage>)?`,
    );
  const stack = {
    name,
    region,
    apiBaseUrl: outputs.ApiBaseUrl,
    restApiId: outputs.ApiId,
    stageName: outputs.Stage,
    aws,
  };
  return { tableName: outputs.TableName, stack };
}

let applied: Target | undefined;

/** Points the domain modules at the target; they read these once, when first imported. */
export function applyTarget(target: Target): void {
  applied = target;
  process.env.TABLE_NAME = target.tableName;
  if (target.endpoint) process.env.DYNAMODB_ENDPOINT = target.endpoint;
  else delete process.env.DYNAMODB_ENDPOINT;
  // The table's DynamoDB client takes the region from the environment; --region means the stack's.
  if (target.stack?.region) process.env.AWS_REGION = target.stack.region;
  // stdout carries exactly one JSON document, so the domain's logger may only speak on stderr (warn and above).
  process.env.POWERTOOLS_LOG_LEVEL = 'WARN';
}

/** The target of this run, for commands that do more than table work (`key revoke --stack`). */
export function appliedTarget(): Target | undefined {
  return applied;
}
