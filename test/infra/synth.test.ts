import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ROUTES } from '../../lambdas/api/routes';
import { REPO_ROOT } from '../../lib/constructs/function-factory';

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
    expect({ status: result.status, stderr: result.status === 0 ? '' : String(result.stderr).slice(-3000) }).toEqual({ status: 0, stderr: '' });
  });

  it('bundles every route handler as a minified ES module with its source map', () => {
    for (const route of ROUTES) {
      const dir = bundleDirOf(route.operationId);

      const code = fs.readFileSync(path.join(dir, 'index.mjs'), 'utf8');

      expect(code.startsWith('import { createRequire as __createRequire }')).toBe(true);
      expect(code).toMatch(/export\s*\{[^}]*\bas handler\b/);
      expect(fs.existsSync(path.join(dir, 'index.mjs.map'))).toBe(true);
    }
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
});
