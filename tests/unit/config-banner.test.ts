import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startupBanner } from '../../src/config/banner.js';
import { loadConfig } from '../../src/config/index.js';

/** The start-up banner's policy lines: what is in force, for which platform, and what can never apply. */

function banner(file: unknown, env: Record<string, string>, tools: string[] = ['remember']) {
  const directory = mkdtempSync(join(tmpdir(), 'butler-banner-'));
  writeFileSync(join(directory, 'butler.config.json'), JSON.stringify(file));
  const { config } = loadConfig({ BUTLER_CONFIG: 'butler.config.json', ...env }, directory);
  return startupBanner(config, { port: 3000, databaseLocation: 'db', tools, mcp: {}, mcpWithoutCard: [] });
}

const model = { BUTLER_MODEL: 'gpt-4o', BUTLER_BASE_URL: 'https://models.example.com/v1' };
const slack = { SLACK_BOT_TOKEN: 'xoxb-1', SLACK_SIGNING_SECRET: 'secret' };
const policy = {
  approvers: { slack: ['U0LEAD', 'U0ONCALL'], api: ['olga'] },
  approvalPolicy: {
    quorum: { high: 2 },
    remindAfter: '15m',
    escalateAfter: '1h',
    escalateTo: { slack: ['U0ONCALL'] },
  },
  channels: [{ name: 'ops', platform: 'slack', id: 'C0OPS', approvers: ['U0OPS'] }],
  budgets: [{ scope: 'channel', platform: 'slack', id: 'C0OPS', tokensPerDay: 200_000 }],
  agents: [
    { name: 'docs', description: 'Reads docs.', instructions: 'Read.', tools: ['lookup_docs', 'remember'] },
  ],
};

describe('the start-up banner shows the policy in force', () => {
  it('lists approvers, two-person rules, reminders, profiles and budgets with their platform', () => {
    const text = banner(policy, { ...model, ...slack });
    expect(text).toMatch(/approvers +slack: U0LEAD, U0ONCALL; api: olga/);
    expect(text).toMatch(/two-person +high risk needs 2 approvers/);
    expect(text).toMatch(/reminders +remind after 15m, escalate after 1h to slack: U0ONCALL/);
    expect(text).toMatch(/profile ops +slack C0OPS/);
    expect(text).toMatch(
      /budget +channel C0OPS on slack: 200000 tokens a day; when spent, it stops answering/,
    );
    // Slack is on here: only the API approvers (the API is off) and the agent's unknown tool can never apply.
    expect(text.match(/WARNING +.*/g)).toEqual([
      expect.stringMatching(/WARNING +approvers\.api is for api, which is off: it never applies/),
      expect.stringMatching(/WARNING +agent docs: "lookup_docs" matches none of Butler's tools/),
    ]);
  });

  it('warns about policy for a platform that is off and agent tools that match nothing', () => {
    const text = banner(policy, model);
    for (const warning of [
      'approvers.slack is for slack, which is off: it never applies',
      'channel profile ops is for slack, which is off: it never applies',
      'the budget of channel C0OPS is for slack, which is off: it never applies',
      `agent docs: "lookup_docs" matches none of Butler's tools`,
    ])
      expect(text).toMatch(new RegExp(`WARNING +${warning.replaceAll('.', '\\.')}`));
    expect(text).not.toContain('"remember" matches none');
  });

  it('says when nobody approves, and labels the demo model', () => {
    const text = banner({}, { BUTLER_MODEL: 'demo' });
    expect(text).toMatch(/approvers +none: medium risk is decided by the requester, high risk by nobody/);
    const demo = startupBanner(loadConfig({ BUTLER_MODEL: 'demo' }, tmpdir()).config, {
      port: 3000,
      databaseLocation: 'db',
      tools: [],
      mcp: {},
      mcpWithoutCard: [],
      demo: { approver: false },
    });
    expect(demo).toMatch(/model +DEMO: scripted replies, not an LLM/);
  });
});
