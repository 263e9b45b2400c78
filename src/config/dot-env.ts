import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Reads `.env` in the working directory into the environment when there is one, as `npm start` and
 * `npm run chat` promise: variables already set win. A missing file is the usual case on a fresh clone, and
 * says nothing (Node's own `--env-file-if-exists`, under tsx, said ".env not found" twice at every start).
 */
export function loadDotEnv(directory = process.cwd()): void {
  const file = join(directory, '.env');
  if (existsSync(file)) process.loadEnvFile(file);
}
