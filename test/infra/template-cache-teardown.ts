import { rmSync } from 'node:fs';

export default function templateCacheTeardown(): void {
  const dir = process.env.INFRA_TEMPLATE_DIR;
  if (dir) rmSync(dir, { recursive: true, force: true });
}
