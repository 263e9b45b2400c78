import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { ToolCallRecord } from '../../../src/core/contracts/observer.js';
import {
  createMetricsObserver,
  maxToolLabels,
  maxWorkspaceLabels,
  otherLabel,
} from '../../../src/observability/metrics-observer.js';

/** The tool label stays bounded however many tools MCP servers offer and whatever names the model makes up. */

const at = new Date('2026-11-22T10:00:00.000Z');
const call = (toolName: string, decision: ToolCallRecord['decision'] = 'auto'): ToolCallRecord => ({
  toolName,
  callId: `call-${toolName}`,
  risk: 'low',
  decision,
  startTime: at,
  endTime: at,
  input: { secret: 'argument' },
});

describe('metrics observer', () => {
  it(`labels the first ${maxToolLabels} tool names, then counts the rest and refused calls as ${otherLabel}`, async () => {
    const registry = new Registry();
    const turn = createMetricsObserver(registry).startTurn({
      turnId: 'turn-1',
      conversationKey: 'slack:T1:C1:1.0',
      platform: 'slack',
      userId: 'U1',
      trigger: 'message',
    });
    for (let index = 0; index < maxToolLabels + 20; index++) turn.toolCall(call(`docs__tool_${index}`));
    turn.toolCall(call('docs__tool_0'));
    turn.toolCall(call('made_up_by_the_model', 'invalid'));
    turn
      .agent({ agent: 'ops', delegateCallId: 'call-delegate', task: 'look', resumed: false })
      .toolCall(call('docs__tool_1', 'approved'));
    turn.end({ status: 'replied' });

    const [metric] = (await registry.getMetricsAsJSON()).filter(
      (entry) => entry.name === 'butler_tool_calls_total',
    );
    const counts = new Map(
      (metric?.values ?? []).map((sample) => [
        `${sample.labels.tool}/${sample.labels.decision}`,
        sample.value,
      ]),
    );
    expect(counts.size).toBe(maxToolLabels + 3);
    expect(counts.get('docs__tool_0/auto')).toBe(2);
    expect(counts.get('docs__tool_1/approved')).toBe(1);
    expect(counts.get(`${otherLabel}/auto`)).toBe(20);
    expect(counts.get(`${otherLabel}/invalid`)).toBe(1);
    const page = await registry.metrics();
    for (const text of ['made_up_by_the_model', 'slack:T1:C1', 'U1', 'argument', 'turn-1'])
      expect(page.includes(text), text).toBe(false);
  });

  it(`counts turns per workspace for the first ${maxWorkspaceLabels} workspaces, then as ${otherLabel}`, async () => {
    const registry = new Registry();
    const observer = createMetricsObserver(registry);
    const turnIn = (team: string) =>
      observer
        .startTurn({
          turnId: `turn-${team}`,
          conversationKey: `slack:${team}:C1:1.0`,
          platform: 'slack',
          userId: 'U1',
          trigger: 'message',
        })
        .end({ status: 'replied' });
    for (let index = 0; index < maxWorkspaceLabels + 5; index++) turnIn(`T${index}`);
    turnIn('T0');
    const [metric] = (await registry.getMetricsAsJSON()).filter(
      (entry) => entry.name === 'butler_turns_total',
    );
    const counts = new Map((metric?.values ?? []).map((sample) => [sample.labels.workspace, sample.value]));
    expect(counts.size).toBe(maxWorkspaceLabels + 1);
    expect(counts.get('T0')).toBe(2);
    expect(counts.get(otherLabel)).toBe(5);
  });

  it('counts approvals given toward a quorum apart from decisions, by risk only', async () => {
    const registry = new Registry();
    const observer = createMetricsObserver(registry);
    const approval = {
      approvalId: 'a-1',
      conversationKey: 'slack:T1:C1:1.0',
      toolName: 'rotate_keys',
      risk: 'high',
    };
    observer.approvalVoted?.({ ...approval, votes: 1, quorum: 2, votedBy: 'U2' });
    observer.approvalDecided({ ...approval, decision: 'approve', decidedBy: 'U3' });
    const counted = (await registry.getMetricsAsJSON()).find(
      (entry) => entry.name === 'butler_approvals_counted_total',
    );
    expect(counted?.values).toEqual([{ value: 1, labels: { risk: 'high' } }]);
    const page = await registry.metrics();
    for (const text of ['a-1', 'slack:T1', 'rotate_keys', 'U2', 'U3'])
      expect(page.includes(text), text).toBe(false);
  });
});
