/**
 * What Slack refuses in a `context_actions` block (docs.slack.dev "Context actions block" and "Feedback
 * buttons element"): 1 to 5 elements, each `feedback_buttons` or `icon_button`; feedback buttons need a
 * positive and a negative button, each with plain_text text (at most 75) and a value (at most 2000);
 * action_id and block_id at most 255. Written from the docs, apart from Butler's code.
 */
export function contextActionsViolations(block: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const elements = Array.isArray(block.elements) ? (block.elements as Array<Record<string, unknown>>) : [];
  if (elements.length === 0 || elements.length > 5) problems.push('context_actions needs 1 to 5 elements');
  if (String(block.block_id ?? '').length > 255) problems.push('block_id over 255');
  for (const element of elements) {
    if (String(element.action_id ?? '').length > 255) problems.push('action_id over 255');
    if (element.type === 'icon_button') continue;
    if (element.type !== 'feedback_buttons') {
      problems.push(`context_actions cannot hold ${String(element.type)}`);
      continue;
    }
    for (const side of ['positive_button', 'negative_button']) {
      const button = element[side] as Record<string, unknown> | undefined;
      const text = button?.text as Record<string, unknown> | undefined;
      if (!button || text?.type !== 'plain_text' || typeof text.text !== 'string')
        problems.push(`${side} needs plain_text text`);
      else if (text.text.length > 75) problems.push(`${side} text over 75`);
      if (typeof button?.value !== 'string' || button.value.length === 0 || button.value.length > 2000)
        problems.push(`${side} needs a value of 1 to 2000 characters`);
      if (String(button?.accessibility_label ?? '').length > 75) problems.push(`${side} label over 75`);
    }
  }
  return problems;
}
