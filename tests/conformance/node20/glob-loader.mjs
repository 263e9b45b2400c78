// Rewrites the suite's `import { ..., globSync as x, ... } from "fs"` to take globSync from ./glob-sync.mjs.
const shim = JSON.stringify(new URL('./glob-sync.mjs', import.meta.url).href);

export async function load(url, context, nextLoad) {
  const loaded = await nextLoad(url, context);
  if (!url.includes('/@modelcontextprotocol/conformance/dist/')) return loaded;
  const source = String(loaded.source).replace(/import\{([^}]*)\}from"fs"/, (statement, names) => {
    const parts = names.split(',');
    const glob = parts.find((part) => part.trim().startsWith('globSync'));
    if (!glob) return statement;
    const rest = parts.filter((part) => part !== glob).join(',');
    return `import{${rest}}from"fs";import{${glob}}from${shim}`;
  });
  return { ...loaded, source };
}
