import { NestedStack } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import type { Construct } from 'constructs';
import { usagePlanKeyValues, type UsagePlanBuckets } from '../../lambdas/handlers/authorizer/usage-plan-keys';

export type UsagePlanBucketStackProps = {
  usagePlan: apigateway.IUsagePlan;
  buckets: UsagePlanBuckets;
  /** `cct-service-<stage>`: the API keys are named after it. */
  serviceName: string;
};

/**
 * The usage-plan keys (buckets) the authorizer names, each with its place in the plan, in a nested
 * stack of their own. Each bucket is two CloudFormation resources (the API key and the usage-plan
 * key), and the count of buckets is what bounds how many organizations one abusive key can slow
 * (docs/capacity.md, "Noisy neighbours"): here they take one resource of the service stack's 500
 * whatever their number, and up to 240 of them fit the nested stack's own 500.
 */
export class UsagePlanBucketStack extends NestedStack {
  constructor(scope: Construct, id: string, props: UsagePlanBucketStackProps) {
    super(scope, id, { description: `The ${props.buckets.count} usage-plan keys (buckets) of ${props.serviceName}` });
    const { buckets, serviceName } = props;
    usagePlanKeyValues(buckets).forEach((value, bucket) => {
      const apiKey = new apigateway.ApiKey(this, `UsagePlanBucket${bucket}`, {
        apiKeyName: `${serviceName}-bucket-${String(bucket).padStart(3, '0')}`,
        value,
        description: `Meters the service keys whose id hashes to bucket ${bucket} of ${buckets.count} (the authorizer names it)`,
        enabled: true,
      });
      // Not `usagePlan.addApiKey`: that puts the usage-plan key beside the plan, in the service stack.
      new apigateway.CfnUsagePlanKey(this, `UsagePlanBucket${bucket}InPlan`, {
        keyId: apiKey.keyId,
        keyType: 'API_KEY',
        usagePlanId: props.usagePlan.usagePlanId,
      });
    });
  }
}
