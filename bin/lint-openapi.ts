/**
 * `npm run lint:openapi` (part of `npm run lint`, so of `npm test`): the committed OpenAPI
 * document through Spectral's `spectral:oas` ruleset and Redocly's `recommended` ruleset, both
 * run in-process from their npm packages (no ruleset is fetched from a network). Any error or
 * warning fails: the document is what integrators' tools read, so their linters must be quiet.
 */
import { readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { Spectral, type RulesetDefinition } from '@stoplight/spectral-core';
import { oas } from '@stoplight/spectral-rulesets';

const FILE = resolve(__dirname, '..', 'lambdas', 'handlers', 'api', 'openapi', 'openapi.json');

/** Spectral's severities: 0 error, 1 warning, 2 information, 3 hint. */
const SPECTRAL_FAILING = new Set([0, 1]);

async function spectralProblems(text: string): Promise<string[]> {
  const spectral = new Spectral();
  spectral.setRuleset(oas as RulesetDefinition);
  const results = await spectral.run(text);
  return results
    .filter((result) => SPECTRAL_FAILING.has(result.severity))
    .map(
      (result) =>
        `spectral:oas ${result.severity === 0 ? 'error' : 'warning'} ${result.code} at ` +
        `${result.path.join('.') || '(root)'}: ${result.message}`,
    );
}

async function redoclyProblems(text: string): Promise<string[]> {
  const config = await createConfig({ extends: ['recommended'] });
  const problems = await lintFromString({ source: text, absoluteRef: FILE, config });
  return problems
    .filter((problem) => problem.severity === 'error' || problem.severity === 'warn')
    .map(
      (problem) =>
        `redocly:recommended ${problem.severity} ${problem.ruleId} at ${problem.location[0]?.pointer ?? '#'}: ` +
        `${problem.message}`,
    );
}

async function main(): Promise<void> {
  const text = readFileSync(FILE, 'utf8');
  const problems = [...(await spectralProblems(text)), ...(await redoclyProblems(text))];
  const file = relative(process.cwd(), FILE);
  if (problems.length > 0) {
    console.error(`${file}: ${problems.length} lint problem(s):\n${problems.join('\n')}`);
    process.exitCode = 1;
    return;
  }
  console.log(`${file}: spectral:oas and redocly recommended, 0 errors, 0 warnings`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
