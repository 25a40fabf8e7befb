// The AWS SDK warns once per process that Node 20 support ends; the Lambda runtime is Node 24 and
// this machine's Node 20 is supported by the SDK version pinned here, so the warning is noise in tests.
process.env.AWS_SDK_JS_SUPPRESS_MAINTENANCE_MODE_MESSAGE = '1';
process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
process.env.AWS_REGION ??= 'us-east-1';
process.env.TABLE_NAME ??= 'unit-test-table';
