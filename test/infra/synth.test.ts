import { execFile, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildReferencePage } from '../../lambdas/handlers/api/openapi/reference-page';
import { REFERENCE_PAGE_FILE } from '../../lambdas/handlers/api/openapi/reference-page-file';
import { ROUTES } from '../../lambdas/handlers/api/routes';
import { CARRIER_ROUTES, carrierRoutes } from '../../lambdas/handlers/carrier/routes';
import { computeTwilioSignature } from '../../lambdas/contexts/carrier/signature';
import { REPO_ROOT } from '../../lib/constructs/function-factory';
import { LOCAL_ENGINE_CREDENTIALS_ENV } from '../../lambdas/shared/config';

/**
 * The real thing: `cdk synth` of bin/app.ts through the CLI, with esbuild bundling every function
 * and cdk-nag validating, and no network (a proxy on a closed port makes any request fail).
 * About 30 s on two busy cores, most of it esbuild.
 */
describe('cdk synth', () => {
  let outdir: string;
  let template: { Resources: Record<string, { Type: string; Properties: Record<string, never> }> };
  let result: ReturnType<typeof spawnSync>;

  beforeAll(() => {
    outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'cct-synth-'));
    const offline = 'http://127.0.0.1:9';
    result = spawnSync(path.join(REPO_ROOT, 'node_modules', '.bin', 'cdk'), ['synth', '--quiet', '--output', outdir], {
      cwd: REPO_ROOT,
      env: { ...process.env, CDK_DISABLE_VERSION_CHECK: '1', HTTP_PROXY: offline, HTTPS_PROXY: offline, NO_PROXY: '' },
      encoding: 'utf8',
      timeout: 170_000,
    });
    const file = path.join(outdir, 'CctService-dev.template.json');
    template = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : { Resources: {} };
  }, 180_000);

  afterAll(() => fs.rmSync(outdir, { recursive: true, force: true }));

  const bundleDirOf = (operationId: string): string => {
    const fn = Object.values(template.Resources).find(
      (r) => r.Type === 'AWS::Lambda::Function' && String(r.Properties.Description).endsWith(`(${operationId})`),
    );
    const key = (fn!.Properties.Code as { S3Key: string }).S3Key;
    return path.join(outdir, `asset.${key.replace(/\.zip$/, '')}`);
  };

  it('succeeds offline with cdk-nag clean', () => {
    expect({ status: result.status, stderr: result.status === 0 ? '' : String(result.stderr).slice(-3000) }).toEqual({
      status: 0,
      stderr: '',
    });
  });

  it('with no context at all makes a stage (dev) that keeps its table when the stack is deleted, and protects the stack', () => {
    const tables = Object.values(template.Resources).filter((r) => r.Type === 'AWS::DynamoDB::Table') as unknown as {
      DeletionPolicy: string;
      UpdateReplacePolicy: string;
      Properties: { DeletionProtectionEnabled: boolean };
    }[];
    const manifest = JSON.parse(fs.readFileSync(path.join(outdir, 'manifest.json'), 'utf8'));

    expect(
      tables.map((t) => [t.DeletionPolicy, t.UpdateReplacePolicy, t.Properties.DeletionProtectionEnabled]),
    ).toEqual([['Retain', 'Retain', true]]);
    expect(manifest.artifacts['CctService-dev'].properties.terminationProtection).toBe(true);
  });

  it('copies the reference page, built from the committed OpenAPI document, beside the function of GET /docs only', () => {
    // Arrange
    const expected = buildReferencePage();

    // Act
    const page = fs.readFileSync(path.join(bundleDirOf('getApiReference'), REFERENCE_PAGE_FILE), 'utf8');

    // Assess
    expect(page === expected).toBe(true);
    expect(fs.existsSync(path.join(bundleDirOf('getOpenApi'), REFERENCE_PAGE_FILE))).toBe(false);
  });

  it('bundles every route and carrier callback handler as a minified ES module with its source map', () => {
    for (const route of [...ROUTES, ...CARRIER_ROUTES]) {
      const dir = bundleDirOf(route.operationId);

      const code = fs.readFileSync(path.join(dir, 'index.mjs'), 'utf8');
      const map = JSON.parse(fs.readFileSync(path.join(dir, 'index.mjs.map'), 'utf8')) as { sources: string[] };

      expect(code.startsWith('import { createRequire as __createRequire }')).toBe(true);
      expect(code).toMatch(/export\s*\{[^}]*\bas handler\b/);
      // Its own handler, though one esbuild run builds them all (lib/constructs/lambda-bundles.ts).
      expect(map.sources.some((source) => source.endsWith(route.handler))).toBe(true);
    }
  });

  it('gives every function an asset of its own', () => {
    const functions = Object.values(template.Resources).filter((r) => r.Type === 'AWS::Lambda::Function');
    const keys = functions.map((fn) => (fn.Properties.Code as { S3Key: string }).S3Key);

    expect(functions.length).toBeGreaterThan(20);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('produces a bundle that loads and answers on Node (GET /openapi.json)', () => {
    const bundle = path.join(bundleDirOf('getOpenApi'), 'index.mjs');
    const script = `
      const { handler } = await import(${JSON.stringify(bundle)});
      const res = await handler({ httpMethod: 'GET', path: '/api/v1/openapi.json', headers: {}, requestContext: {} },
        { awsRequestId: 'synth-test', functionName: 'getOpenApi', getRemainingTimeInMillis: () => 10000 });
      process.stdout.write(JSON.stringify({ statusCode: res.statusCode, openapi: JSON.parse(res.body).openapi }));
    `;

    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      env: { ...process.env, TABLE_NAME: 'synth-test', AWS_REGION: 'eu-west-1', POWERTOOLS_LOG_LEVEL: 'ERROR' },
      encoding: 'utf8',
      timeout: 30_000,
    });

    expect(JSON.parse(run.stdout)).toEqual({ statusCode: 200, openapi: '3.1.0' });
  });

  /**
   * The carrier's bundles with their secret preload, run on Node against a stand-in for Secrets
   * Manager (the SDK's AWS_ENDPOINT_URL_SECRETS_MANAGER), as Lambda would run them.
   */
  describe('bundles that read the Twilio secret at init', () => {
    const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:cct-twilio-AbC123';
    const PUBLIC_BASE_URL = 'https://abc123.execute-api.eu-west-1.amazonaws.com/dev';
    let secretsManager: Server;
    let endpoint: string;
    let secretString = '';
    let reads: string[] = [];

    beforeAll(async () => {
      secretsManager = createServer((req, res) => {
        let body = '';
        req.on('data', (chunk: Buffer) => (body += chunk.toString()));
        req.on('end', () => {
          reads.push(`${req.headers['x-amz-target']} ${JSON.parse(body).SecretId}`);
          res.writeHead(200, { 'Content-Type': 'application/x-amz-json-1.1' });
          res.end(
            JSON.stringify({
              ARN: SECRET_ARN,
              Name: 'cct-twilio',
              VersionId: 'v1',
              SecretString: secretString,
              CreatedDate: 1,
            }),
          );
        });
      });
      await new Promise<void>((resolve) => secretsManager.listen(0, '127.0.0.1', resolve));
      endpoint = `http://127.0.0.1:${(secretsManager.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      secretsManager.closeAllConnections();
      await new Promise((resolve) => secretsManager.close(resolve));
    });
    beforeEach(() => {
      reads = [];
    });

    /**
     * Imports the bundle in a child Node (asynchronously: this process serves Secrets Manager meanwhile) and runs
     * `body`.
     */
    const runBundle = (operationId: string, env: Record<string, string>, body: string) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const bundle = path.join(bundleDirOf(operationId), 'index.mjs');
        const script = `const { handler } = await import(${JSON.stringify(bundle)});\n${body}`;
        const child = execFile(
          process.execPath,
          ['--input-type=module', '-e', script],
          {
            env: {
              PATH: process.env.PATH,
              AWS_LAMBDA_FUNCTION_NAME: operationId,
              AWS_REGION: 'eu-west-1',
              ...LOCAL_ENGINE_CREDENTIALS_ENV,
              AWS_ENDPOINT_URL_SECRETS_MANAGER: endpoint,
              AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
              // Nothing listens there: a handler that gets as far as the table fails fast.
              DYNAMODB_ENDPOINT: 'http://127.0.0.1:9',
              TABLE_NAME: 'synth-test',
              POWERTOOLS_LOG_LEVEL: 'SILENT',
              ...env,
            },
            encoding: 'utf8',
            timeout: 30_000,
          },
          (error, stdout, stderr) =>
            resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
        );
        child.stdin?.end();
      });

    const callbackEnv = { TWILIO_SECRET_ARN: SECRET_ARN, PUBLIC_BASE_URL };

    it('refuses to start a callback function while the secret still holds the stack’s empty fields', async () => {
      secretString = JSON.stringify({ accountSid: '', authToken: '' });

      const run = await runBundle('twilioSmsInbound', callbackEnv, 'process.stdout.write("loaded");');

      expect(run.code).not.toBe(0);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain(`Secrets Manager secret ${SECRET_ARN} has no accountSid yet`);
      expect(reads).toEqual([`secretsmanager.GetSecretValue ${SECRET_ARN}`]);
    }, 60_000);

    it('checks callback signatures with the token read from the secret at init', async () => {
      secretString = JSON.stringify({
        accountSid: 'AC0123456789abcdef0123456789abcdef',
        authToken: 'token-in-the-secret',
      });
      const route = carrierRoutes.twilioSmsStatus;
      const params = {
        MessageSid: 'SM0123456789abcdef0123456789abcdef',
        MessageStatus: 'delivered',
        From: '+14155550000',
        To: '+14155550100',
      };
      const signed = (token: string) => computeTwilioSignature(`${PUBLIC_BASE_URL}${route.path}`, params, token);
      const invoke = (
        signature: string,
      ) => `await handler({ body: ${JSON.stringify(new URLSearchParams(params).toString())}, isBase64Encoded: false,
          headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Twilio-Signature': ${JSON.stringify(signature)} },
          multiValueQueryStringParameters: null }, { awsRequestId: 'synth', functionName: 'f', getRemainingTimeInMillis: () => 10000 })`;

      const run = await runBundle(
        'twilioSmsStatus',
        callbackEnv,
        `const wrong = ${invoke(signed('another-token'))}; const right = ${invoke(signed('token-in-the-secret'))};
         process.stdout.write(JSON.stringify([wrong.statusCode, right.statusCode]));`,
      );

      // The right signature passes the check and gets as far as the (unreachable) table: 500, not 403.
      expect({ code: run.code, statuses: run.stdout && JSON.parse(run.stdout) }).toEqual({
        code: 0,
        statuses: [403, 500],
      });
      expect(reads).toEqual([`secretsmanager.GetSecretValue ${SECRET_ARN}`]);
    }, 60_000);

    it('refuses the loopback carrier in the sending function, and starts it with Twilio and the secret', async () => {
      secretString = JSON.stringify({
        accountSid: 'AC0123456789abcdef0123456789abcdef',
        authToken: 'token-in-the-secret',
      });

      const loopback = await runBundle(
        'sendMessage',
        { CARRIER: 'loopback', TWILIO_SECRET_ARN: SECRET_ARN },
        'process.stdout.write("loaded");',
      );
      const twilio = await runBundle(
        'sendMessage',
        { CARRIER: 'twilio', TWILIO_SECRET_ARN: SECRET_ARN },
        'process.stdout.write(typeof handler);',
      );

      expect(loopback.stderr).toContain('CARRIER=loopback is for the local runtime and tests only');
      expect(twilio).toMatchObject({ code: 0, stdout: 'function' });
    }, 60_000);
  });
});
