import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A directory for this run's synthesized templates (test/infra/support.ts, `synth`): the infra files synthesize the
 * same configurations (the default one in ten of them), and a template is a pure function of its configuration, so
 * the first file to synthesize one writes it here and the others read it. One directory per run: none outlives it.
 */
export default function templateCacheSetup(): void {
  process.env.INFRA_TEMPLATE_DIR = mkdtempSync(join(tmpdir(), 'cct-infra-templates-'));
}
