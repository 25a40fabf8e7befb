import {
  APIGatewayClient,
  CreateApiKeyCommand,
  CreateUsagePlanKeyCommand,
  DeleteApiKeyCommand,
  GetApiKeysCommand,
} from '@aws-sdk/client-api-gateway';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';

/**
 * The AWS calls of the operator CLI against a deployed stack, and nothing else: the stack's
 * outputs (CloudFormation) and the API Gateway API key that meters each service key in the
 * stack's usage plan. Credentials and, without --region, the region come from the SDK's usual
 * chain (environment, profile, SSO, instance role). Unit tests replace the clients with
 * aws-sdk-client-mock.
 */
export type StackOutputs = Readonly<Record<string, string>>;

/** The usage-plan side of one service key. */
export type UsagePlanKey = { apiKeyId: string; name: string };

export interface DeployedStackApi {
  /** The outputs of a deployed stack; throws naming the stack when it does not exist or is not deployed. */
  outputs(stackName: string): Promise<StackOutputs>;
  /**
   * Creates the API key whose value the authorizer returns for the service key (`value`) and adds
   * it to the usage plan. When the second step fails the API key is deleted again, so a failure
   * leaves nothing half made.
   */
  createUsagePlanKey(input: { usagePlanId: string; value: string; description: string }): Promise<UsagePlanKey>;
  /** Deletes the API key (and with it its usage-plan association); null when there is none. */
  deleteUsagePlanKey(value: string): Promise<UsagePlanKey | null>;
}

/** Stack states in which its outputs describe resources that exist. */
const USABLE_STATUSES = new Set(['CREATE_COMPLETE', 'UPDATE_COMPLETE', 'UPDATE_ROLLBACK_COMPLETE', 'IMPORT_COMPLETE', 'IMPORT_ROLLBACK_COMPLETE']);

export function deployedStackApi(region?: string): DeployedStackApi {
  const cloudFormation = new CloudFormationClient(region ? { region } : {});
  const apiGateway = new APIGatewayClient(region ? { region } : {});

  // The API key's name is its value: both are derived from the service key's id, and unlike the
  // value, the name can be searched for (GetApiKeys nameQuery).
  const findByName = async (name: string): Promise<UsagePlanKey | null> => {
    let position: string | undefined;
    do {
      const page = await apiGateway.send(new GetApiKeysCommand({ nameQuery: name, includeValues: false, position }));
      const found = page.items?.find((item) => item.name === name && item.id);
      if (found?.id) return { apiKeyId: found.id, name };
      position = page.position;
    } while (position);
    return null;
  };

  return {
    async outputs(stackName) {
      let stack;
      try {
        stack = (await cloudFormation.send(new DescribeStacksCommand({ StackName: stackName }))).Stacks?.[0];
      } catch (err) {
        // CloudFormation answers a missing stack with a ValidationError "Stack with id ... does not exist".
        if ((err as Error).name === 'ValidationError') {
          throw new Error(`Stack ${stackName} not found${region ? ` in ${region}` : ''}: ${(err as Error).message}`, { cause: err });
        }
        throw err;
      }
      if (!stack) throw new Error(`Stack ${stackName} not found${region ? ` in ${region}` : ''}`);
      if (!USABLE_STATUSES.has(String(stack.StackStatus))) throw new Error(`Stack ${stackName} is ${stack.StackStatus}, not deployed`);
      return Object.fromEntries((stack.Outputs ?? []).flatMap((o) => (o.OutputKey && o.OutputValue !== undefined ? [[o.OutputKey, o.OutputValue]] : [])));
    },

    async createUsagePlanKey({ usagePlanId, value, description }) {
      const created = await apiGateway.send(new CreateApiKeyCommand({ name: value, value, description, enabled: true }));
      const apiKeyId = created.id;
      if (!apiKeyId) throw new Error('API Gateway created an API key without an id');
      try {
        await apiGateway.send(new CreateUsagePlanKeyCommand({ usagePlanId, keyId: apiKeyId, keyType: 'API_KEY' }));
      } catch (err) {
        await apiGateway.send(new DeleteApiKeyCommand({ apiKey: apiKeyId })).catch(() => undefined);
        throw err;
      }
      return { apiKeyId, name: value };
    },

    async deleteUsagePlanKey(value) {
      const found = await findByName(value);
      if (!found) return null;
      await apiGateway.send(new DeleteApiKeyCommand({ apiKey: found.apiKeyId }));
      return found;
    },
  };
}
