import { Template } from 'aws-cdk-lib/assertions';
import { MAX_USAGE_PLAN_BUCKETS } from '../../lambdas/handlers/authorizer/usage-plan-keys';
import { synth } from './support';

/** CloudFormation's quota of resources per stack (a nested stack has its own). */
const CLOUDFORMATION_RESOURCES_PER_STACK = 500;

/**
 * The ceiling the service stack stays under (docs/capacity.md, "CloudFormation resources"): an
 * endpoint adds about 9 resources, so 400 leaves room to notice and move a part into a nested
 * stack (as the usage-plan buckets are) well before a deploy would fail at 500.
 */
const SERVICE_STACK_CEILING = 400;

const resourceCount = (template: Template) => Object.keys(template.toJSON().Resources).length;

describe("the stacks' resources against CloudFormation's 500", () => {
  it(`keeps the service stack under ${SERVICE_STACK_CEILING} resources, the usage-plan buckets counting one`, () => {
    const { stack, template } = synth();

    const count = resourceCount(template);

    expect(count).toBeLessThanOrEqual(SERVICE_STACK_CEILING);
    // The buckets are one nested-stack resource here, whatever their number.
    expect(resourceCount(synth({ usagePlanBuckets: MAX_USAGE_PLAN_BUCKETS }).template)).toBe(count);
    template.resourceCountIs('AWS::CloudFormation::Stack', 1);
    expect(stack.api.usagePlanBuckets.count).toBe(stack.config.usagePlanBuckets);
  });

  it('fits the largest bucket count allowed into the nested stack, two resources a bucket', () => {
    const { stack } = synth({ usagePlanBuckets: MAX_USAGE_PLAN_BUCKETS });

    const count = resourceCount(Template.fromStack(stack.api.usagePlanBucketStack));

    expect(count).toBe(2 * MAX_USAGE_PLAN_BUCKETS);
    expect(count).toBeLessThanOrEqual(CLOUDFORMATION_RESOURCES_PER_STACK);
  });
});
