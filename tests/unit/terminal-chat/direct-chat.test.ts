import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ConsoleAdapter, terminalAddress } from '../../../src/adapters/terminal-chat/console-adapter.js';
import { inboundMessage } from '../../helpers/messages.js';

/** The terminal chat for scheduled tasks: its person's time zone, and its one direct chat. */

function terminal() {
  const output = new PassThrough();
  let written = '';
  output.on('data', (chunk) => {
    written += String(chunk);
  });
  return { adapter: new ConsoleAdapter(output, '.'), written: () => written };
}

describe('terminal chat', () => {
  it("gives the person this machine's time zone", async () => {
    const { adapter } = terminal();
    const message = inboundMessage({
      text: 'hi',
      address: terminalAddress,
      user: { id: 'ana', name: 'ana' },
    });
    const prepared = await adapter.prepare(message);
    expect(prepared.message.user).toEqual({
      id: 'ana',
      name: 'ana',
      timezone: Intl.DateTimeFormat().resolvedOptions().timeZone,
    });
  });

  it('is its own direct chat: shows the note like a notice without ending the turn that asked', async () => {
    const { adapter, written } = terminal();
    let ended = false;
    void adapter.nextTurnEnd().then(() => {
      ended = true;
    });
    const address = await adapter.openDirectConversation(
      { id: 'ana' },
      'local',
      'I\'ll post your scheduled task here, next at 09:00: "stretch"',
    );
    expect(address).toEqual({ platform: 'console', workspace: 'local', channel: 'terminal', thread: 'main' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(written()).toContain('I\'ll post your scheduled task here, next at 09:00: "stretch"');
    expect(ended).toBe(false);
  });
});
