import { APIGatewayClient, FlushStageAuthorizersCacheCommand } from '@aws-sdk/client-api-gateway';
import {
  CloudFormationClient,
  DescribeStackResourcesCommand,
  DescribeStacksCommand,
} from '@aws-sdk/client-cloudformation';

/**
 * The AWS calls of the operator CLI against a deployed stack, and nothing else: the stack's
 * outputs (CloudFormation) and the stage's authorizer cache (service keys are metered by the
 * stack's own usage-plan buckets, so issuing or revoking one calls no API Gateway key API).
 * Credentials and, without --region, the region come from the SDK's usual chain (environment,
 * profile, SSO, instance role). Unit tests replace the clients with aws-sdk-client-mock.
 */
export type StackOutputs = Readonly<Record<string, string>>;

export interface DeployedStackApi {
  /** The outputs of a deployed stack; throws naming the stack when it does not exist or is not deployed. */
  outputs(stackName: string): Promise<StackOutputs>;
  /** The stack that made a resource (a table, by its name); undefined when no stack did. */
  stackOfResource(physicalId: string): Promise<string | undefined>;
  /**
   * Drops every authorizer decision API Gateway has cached for the stage, so the next request of
   * each key is decided afresh from the table: a revocation or a plan change applies at once
   * instead of after the cache's TTL.
   */
  flushAuthorizerCache(stage: { restApiId: string; stageName: string }): Promise<void>;
}

/** Stack states in which its outputs describe resources that exist. */
const USABLE_STATUSES = new Set([
  'CREATE_COMPLETE',
  'UPDATE_COMPLETE',
  'UPDATE_ROLLBACK_COMPLETE',
  'IMPORT_COMPLETE',
  'IMPORT_ROLLBACK_COMPLETE',
]);

/**
 * One pair of clients per region for the life of the process (a script that runs many commands in one process makes
 * them once).
 */
const clientsByRegion = new Map<string, { cloudFormation: CloudFormationClient; apiGateway: APIGatewayClient }>();

function clientsFor(region: string | undefined) {
  const key = region ?? '';
  let clients = clientsByRegion.get(key);
  if (!clients) {
    clients = {
      cloudFormation: new CloudFormationClient(region ? { region } : {}),
      apiGateway: new APIGatewayClient(region ? { region } : {}),
    };
    clientsByRegion.set(key, clients);
  }
  return clients;
}

export function deployedStackApi(region?: string): DeployedStackApi {
  const { cloudFormation, apiGateway } = clientsFor(region);

  return {
    async outputs(stackName) {
      let stack;
      try {
        stack = (await cloudFormation.send(new DescribeStacksCommand({ StackName: stackName }))).Stacks?.[0];
      } catch (err) {
        // CloudFormation answers a missing stack with a ValidationError "Stack with id ... does not exist".
        if ((err as Error).name === 'ValidationError') {
          throw new Error(`Stack ${stackName} not found${region ? ` in ${region}` : ''}: ${(err as Error).message}`, {
            cause: err,
          });
        }
        throw err;
      }
      if (!stack) throw new Error(`Stack ${stackName} not found${region ? ` in ${region}` : ''}`);
      if (!USABLE_STATUSES.has(String(stack.StackStatus)))
        throw new Error(`Stack ${stackName} is ${stack.StackStatus}, not deployed`);
      return Object.fromEntries(
        (stack.Outputs ?? []).flatMap((o) =>
          o.OutputKey && o.OutputValue !== undefined ? [[o.OutputKey, o.OutputValue]] : [],
        ),
      );
    },

    async stackOfResource(physicalId) {
      try {
        const { StackResources } = await cloudFormation.send(
          new DescribeStackResourcesCommand({ PhysicalResourceId: physicalId }),
        );
        return StackResources?.[0]?.StackName;
      } catch (err) {
        // CloudFormation answers a resource no stack made with a ValidationError "Stack for ... does not exist".
        if ((err as Error).name === 'ValidationError') return undefined;
        throw err;
      }
    },

    async flushAuthorizerCache({ restApiId, stageName }) {
      await apiGateway.send(new FlushStageAuthorizersCacheCommand({ restApiId, stageName }));
    },
  };
}
