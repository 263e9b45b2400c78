import { readFileSync } from 'node:fs';

/**
 * Summarizes a V8 CPU profile (`node --cpu-prof`, e.g. from `npm run bench -- --cpu-prof`): self time by
 * function and by package, so a profile can be read without DevTools.
 *
 *   npx tsx bench/profile-summary.ts /tmp/butler-profiles-…/ingest.cpuprofile [rows]
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const pausedMicroseconds = 500_000;

function packageOf(url: string): string {
  if (!url) return '(native / idle / gc)';
  if (url.startsWith('node:')) return url;
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + 'node_modules/'.length).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : (rest[0] ?? url);
  }
  const source = url.indexOf('/src/');
  return source >= 0 ? url.slice(source + 1) : url;
}

function summarizeProfile(path: string, rows: number): string {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfTime = new Map<number, number>();
  profile.samples.forEach((id, index) => {
    const delta = profile.timeDeltas[index] ?? 0;
    // A gap this long is the process being paused (SIGSTOP while another target was measured), not work.
    if (delta > pausedMicroseconds) return;
    selfTime.set(id, (selfTime.get(id) ?? 0) + delta);
  });
  const total = [...selfTime.values()].reduce((sum, value) => sum + value, 0);
  const byFunction = new Map<string, number>();
  const byPackage = new Map<string, number>();
  for (const [id, micros] of selfTime) {
    const frame = byId.get(id)?.callFrame;
    if (!frame) continue;
    const where = packageOf(frame.url);
    const name = `${frame.functionName || '(anonymous)'}  ${where}:${frame.lineNumber + 1}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + micros);
    byPackage.set(where, (byPackage.get(where) ?? 0) + micros);
  }
  const top = (map: Map<string, number>) =>
    [...map.entries()]
      .sort((left, right) => right[1] - left[1])
      .slice(0, rows)
      .map(([name, micros]) => `${((micros / total) * 100).toFixed(1).padStart(5)}%  ${name}`)
      .join('\n');
  return [
    `${path}: ${(total / 1e6).toFixed(1)} s sampled`,
    '',
    'self time by package / file:',
    top(byPackage),
    '',
    'self time by function:',
    top(byFunction),
  ].join('\n');
}

const [path, rows] = process.argv.slice(2);
if (!path) {
  console.error('usage: npx tsx bench/profile-summary.ts <file.cpuprofile> [rows]');
  process.exit(2);
}
console.log(summarizeProfile(path, Number(rows ?? 25)));
