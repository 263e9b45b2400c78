import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/core/contracts/errors.js';
import { startTestButler } from '../../helpers/butler-app.js';
import { databaseKind } from '../../helpers/database.js';

/** A channel profile's tool list that can offer nothing stops the start, naming the pattern. */

describe(`channel profile tool patterns (${databaseKind})`, () => {
  it("refuses to start on a pattern that matches none of Butler's tools or names an unconfigured MCP server", async () => {
    const starting = startTestButler({
      config: {
        channels: [
          {
            name: 'docs-desk',
            platform: 'console',
            id: 'docs',
            tools: ['remember', 'schedule_*', 'lookup_dcos', 'ghost__*', '*__read'],
          },
        ],
      },
    });
    const error = await starting.then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).issues).toEqual([
      {
        variable: 'config file: channels.0.tools',
        message: `"lookup_dcos" matches none of Butler's tools (MCP tools are named server__tool)`,
      },
      {
        variable: 'config file: channels.0.tools',
        message: '"ghost__*" names the MCP server ghost, which is not configured',
      },
    ]);
  });
});
