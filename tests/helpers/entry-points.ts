import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * How tests start Butler's entry points as a user would, but outside the repository: a child that ran in
 * the repository would read a developer's own `butler.config.yaml` and `.butler` there.
 */

export const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));

/** tsx's loader by absolute URL, so that the child loads it from any working directory. */
export const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

/** Node's arguments for running a TypeScript file of the repository (`src/main.ts`) through tsx. */
export function entryArguments(entry: string): string[] {
  return ['--import', tsxLoader, join(repositoryRoot, entry)];
}

/** Environment that lets tsx find the repository's tsconfig from another working directory. */
export const tsxEnvironment = { TSX_TSCONFIG_PATH: join(repositoryRoot, 'tsconfig.json') };
