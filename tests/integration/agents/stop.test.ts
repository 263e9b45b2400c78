import { describe, expect, it } from 'vitest';
import { inboundMessage } from '../../helpers/messages.js';
import { waitFor } from '../../helpers/wait-for.js';
import {
  ana,
  ask,
  byAgent,
  delegating,
  isButler,
  newAddress,
  olga,
  useAgentButler,
} from './agent-fixtures.js';

/** Stopping a turn while a sub-agent works: its run ends, nothing runs after, the next message is answered. */

const suite = useAgentButler();

describe('stopping a turn during a sub-agent run', () => {
  it('ends the run and the turn; the calls the agent would make next never run', async () => {
    const { model, tools, platform, app } = suite;
    const address = newAddress();
    // The agent checks the service slowly (the tool takes 20 s), then would restart it.
    tools.respond({ delayMs: 20_000, body: '{"status":"degraded"}' }, '/service_status');
    model.enqueue(delegating(['ops', 'Check api and restart it if degraded.']));
    model.enqueueFor(byAgent('ops'), {
      toolCalls: [{ id: 'status_1', name: 'service_status', arguments: '{"service":"api"}' }],
    });
    await app.butler.service.accept(inboundMessage({ text: 'fix api', address, user: ana, isDirect: false }));
    await waitFor(() => tools.requests.some((request) => request.path.startsWith('/service_status')), 10_000);

    const asked = Date.now();
    expect(await app.butler.service.stop({ address, user: olga })).toBe('stopping');
    await app.settle(10_000);
    expect(Date.now() - asked).toBeLessThan(2_000);
    expect(tools.requests.map((request) => request.path)).toEqual(['/service_status?service=api']);
    expect(platform.finalTexts().at(-1)).toBe('_Asking ops…_\n\n_Stopped by Olga._');
    // Neither Butler nor the agent was asked again after the stop.
    expect(model.requests.filter(isButler)).toHaveLength(1);
    expect(model.requests.filter(byAgent('ops'))).toHaveLength(1);

    model.enqueue({ text: 'Here now.' });
    await ask(app, address, 'are you there?');
    expect(platform.finalTexts().at(-1)).toBe('Here now.');
  });
});
