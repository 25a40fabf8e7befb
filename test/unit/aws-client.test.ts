import { dynamo } from '../../lambdas/shared/aws';

describe('the process-wide DynamoDB client', () => {
  it("carries no logging middleware: with the SDK's no-op logger it only copied every input and output", () => {
    // Act
    const middleware = dynamo.middlewareStack.identify();
    // Assess
    expect(middleware.some((name) => name.startsWith('loggerMiddleware'))).toBe(false);
    // The rest of the stack is as the SDK builds it: signing and retries stay.
    expect(
      middleware.some((name) => name.startsWith('awsAuthMiddleware') || name.startsWith('httpSigningMiddleware')),
    ).toBe(true);
    expect(middleware.some((name) => name.startsWith('retryMiddleware'))).toBe(true);
  });
});
