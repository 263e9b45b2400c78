import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { sessionTitle } from '../../../src/adapters/slack/agent-sessions.js';
import { manifestBotScopes } from '../../../src/adapters/slack/manifest-scopes.js';
import { contextChangedPlace, threadStartedPlace } from '../../../src/adapters/slack/suggested-prompts.js';
import { fileConfigSchema } from '../../../src/config/file.js';
import { type FakeSlackApi, startFakeSlackApi } from '../../helpers/fake-slack-api.js';

/** Butler as a Slack agent, piece by piece: the manifest, session titles, agent events, config, the fake's rules. */

describe('the Slack manifest', () => {
  const manifest = parseYaml(readFileSync('slack/manifest.yaml', 'utf8'));

  it('declares an agent (never the retired assistant view) with what sessions and prompts need', () => {
    expect(manifest.features.assistant_view).toBeUndefined();
    const description: string = manifest.features.agent_view.agent_description;
    // Slack's limit for agent_description (@slack/web-api's manifest types).
    expect(description.length).toBeGreaterThan(0);
    expect(description.length).toBeLessThanOrEqual(300);
    expect(manifest.oauth_config.scopes.bot).toEqual(
      expect.arrayContaining(['assistant:write', 'chat:write']),
    );
    expect(manifest.settings.event_subscriptions.bot_events).toEqual(
      expect.arrayContaining(['agent_session_stopped', 'assistant_thread_started', 'app_context_changed']),
    );
  });

  it('asks an install over OAuth for exactly its bot scopes, and hears when it is removed', () => {
    expect(manifest.oauth_config.scopes.bot).toEqual([...manifestBotScopes]);
    expect(manifest.oauth_config.scopes.user).toBeUndefined();
    expect(manifest.settings.event_subscriptions.bot_events).toEqual(
      expect.arrayContaining(['app_uninstalled', 'tokens_revoked']),
    );
  });
});

describe('session titles', () => {
  it('are one plain line whose mentions ping nobody', () => {
    expect(sessionTitle('## Deploy **status**\n\nfor `payments`?')).toBe('Deploy status for payments?');
    expect(sessionTitle('ask <@U0BOB> and <!here> @everyone')).toBe(
      'ask <\u200b@U0BOB> and <\u200b!here> @\u2060everyone',
    );
  });

  it('are at most 200 characters, never cut through an emoji, and absent for an empty message', () => {
    const title = sessionTitle(`${'a'.repeat(198)}👍🏽 and more`);
    expect(title?.length).toBeLessThanOrEqual(200);
    expect(title).toBe(`${'a'.repeat(198)}…`);
    expect(sessionTitle('  \n ')).toBeUndefined();
  });
});

describe('agent container events', () => {
  it('read the container channel and the channel the person views', () => {
    const thread = { user_id: 'U0ALICE', channel_id: 'D0ALICE', thread_ts: '1.1' };
    expect(
      threadStartedPlace({ assistant_thread: { ...thread, context: { channel_id: 'C0DEPLOYS' } } }),
    ).toEqual({
      channel: 'D0ALICE',
      viewing: 'C0DEPLOYS',
    });
    expect(threadStartedPlace({ assistant_thread: { ...thread, context: {} } })).toEqual({
      channel: 'D0ALICE',
    });
    expect(threadStartedPlace({ type: 'assistant_thread_started' })).toBeUndefined();
    const entities = [
      { type: 'slack#/types/canvas_id', value: 'F0CANVAS' },
      { type: 'slack#/types/channel_id', value: 'C0DEPLOYS' },
    ];
    expect(contextChangedPlace({ channel: 'D0ALICE', context: { entities } })).toEqual({
      channel: 'D0ALICE',
      viewing: 'C0DEPLOYS',
    });
    expect(contextChangedPlace({ channel: 'D0ALICE', context: {} })).toEqual({ channel: 'D0ALICE' });
    expect(contextChangedPlace({ context: { entities } })).toBeUndefined();
  });
});

describe('slack.suggestedPrompts in the config file', () => {
  const prompt = { title: 'Status', message: 'How are the services?' };

  it('takes up to four prompts, each with a title and a message', () => {
    expect(fileConfigSchema.parse({}).slack.suggestedPrompts).toEqual([]);
    expect(fileConfigSchema.parse({ slack: { suggestedPrompts: [prompt] } }).slack.suggestedPrompts).toEqual([
      prompt,
    ]);
    expect(() => fileConfigSchema.parse({ slack: { suggestedPrompts: Array(5).fill(prompt) } })).toThrow();
    expect(() => fileConfigSchema.parse({ slack: { suggestedPrompts: [{ title: 'Status' }] } })).toThrow();
    expect(() => fileConfigSchema.parse({ slack: { prompts: [prompt] } })).toThrow();
  });
});

describe("the fake Slack's agent methods, strict as Slack", () => {
  let fake: FakeSlackApi;
  beforeEach(async () => {
    fake = await startFakeSlackApi();
    fake.agents.available = true;
  });
  afterEach(async () => {
    await fake.close();
  });

  async function call(method: string, args: Record<string, unknown>) {
    const response = await fetch(`${fake.url}${method}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer xoxb-test' },
      body: JSON.stringify(args),
    });
    return (await response.json()) as { ok: boolean; error?: string };
  }

  const thread = { channel_id: 'C0GENERAL', thread_ts: '1.1' };

  it('refuses a session status Slack would refuse', async () => {
    expect(await call('agents.sessions.setStatus', { ...thread, status: 'working' })).toMatchObject({
      ok: false,
    });
    expect(
      await call('agents.sessions.setStatus', { channel_id: 'C0GENERAL', status: 'active' }),
    ).toMatchObject({
      ok: false,
    });
    const long = { ...thread, status: 'processing', title: 'x'.repeat(201) };
    expect(await call('agents.sessions.setStatus', long)).toMatchObject({ ok: false });
    expect(await call('agents.sessions.rename', { ...thread, title: 'New' })).toMatchObject({ ok: false });
    expect(
      await call('agents.sessions.setStatus', { ...thread, status: 'processing', title: 'First' }),
    ).toEqual({
      ok: true,
      status: 'processing',
      title: 'First',
    });
    // A title counts only when the session is created; rename changes it.
    await call('agents.sessions.setStatus', { ...thread, status: 'active', title: 'Second' });
    expect(fake.agents.sessions.get('C0GENERAL:1.1')?.title).toBe('First');
    expect(await call('agents.sessions.rename', { ...thread, title: 'Renamed' })).toEqual({ ok: true });
    expect(fake.agents.sessions.get('C0GENERAL:1.1')).toMatchObject({
      title: 'Renamed',
      statuses: ['processing', 'active'],
    });
  });

  it("sets an agent's prompts per channel; with thread_ts the call silently does nothing", async () => {
    const prompts = [{ title: 'Status', message: 'How are the services?' }];
    expect(
      await call('assistant.threads.setSuggestedPrompts', { channel_id: 'D0ALICE', prompts: [] }),
    ).toMatchObject({
      ok: false,
    });
    const five = Array(5).fill(prompts[0]);
    expect(
      await call('assistant.threads.setSuggestedPrompts', { channel_id: 'D0ALICE', prompts: five }),
    ).toMatchObject({
      ok: false,
    });
    expect(
      await call('assistant.threads.setSuggestedPrompts', {
        channel_id: 'D0ALICE',
        thread_ts: '1.1',
        prompts,
      }),
    ).toEqual({
      ok: true,
    });
    expect(fake.agents.suggestedPrompts.size).toBe(0);
    await call('assistant.threads.setSuggestedPrompts', { channel_id: 'D0ALICE', prompts, title: 'Try' });
    expect(fake.agents.suggestedPrompts.get('D0ALICE')).toEqual({ title: 'Try', prompts });
  });

  it('answers as a workspace without agents when switched off', async () => {
    fake.agents.available = false;
    expect(await call('agents.sessions.setStatus', { ...thread, status: 'processing' })).toEqual({
      ok: false,
      error: 'not_allowed',
    });
  });
});
