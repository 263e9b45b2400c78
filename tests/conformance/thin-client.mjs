// The command the MCP conformance suite runs for a scenario (`client --command`): it hands the scenario's server
// URL (the last argument) and context to the scenario host in the test process, where Butler is the client, and
// exits with its verdict. Plain JavaScript: the suite starts it once per scenario.
const host = process.env.BUTLER_CONFORMANCE_HOST;
if (!host) throw new Error('BUTLER_CONFORMANCE_HOST is not set: run the suite from tests/conformance');
const response = await fetch(host, {
  method: 'POST',
  body: JSON.stringify({
    scenario: process.env.MCP_CONFORMANCE_SCENARIO ?? '',
    serverUrl: process.argv.at(-1) ?? '',
    context: JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}'),
  }),
});
const verdict = await response.text();
if (!response.ok) process.stderr.write(`${verdict}\n`);
process.exit(response.ok ? 0 : 1);
