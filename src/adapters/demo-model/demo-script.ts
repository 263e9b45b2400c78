/**
 * What the demo model answers: a script, not a language model. It reads back what it was sent (files
 * included), asks for `demo_restart` when a message asks to restart something and for `demo_lookup` when it
 * asks to look something up, and says what a tool answered. Every reply starts by saying it is a demo.
 */

export const demoNotice =
  '_Demo model: scripted replies, not an LLM. Set BUTLER_MODEL (with BUTLER_BASE_URL and BUTLER_API_TOKEN) for a real one._';

export type DemoReply = { text: string } | { toolCall: { name: string; arguments: string } };

interface ChatMessage {
  role: string;
  content?: unknown;
  tool_call_id?: string;
  tool_calls?: Array<{ id?: string; function?: { name?: string } }>;
}

/** The text of a message's content, and the files and images in it (as the model client sends them). */
function read(content: unknown): { text: string; files: string[]; images: number } {
  const parts =
    typeof content === 'string' ? [{ type: 'text', text: content }] : Array.isArray(content) ? content : [];
  const texts: string[] = [];
  const files: string[] = [];
  let images = 0;
  for (const part of parts as Array<{ type?: string; text?: unknown }>) {
    if (part.type === 'image_url') images += 1;
    if (typeof part.text !== 'string') continue;
    const file = /^<file name=("(?:[^"\\]|\\.)*")>\n([\s\S]*)\n<\/file>$/.exec(part.text);
    // The note Butler adds to a message for each file it carries is not the person's words.
    if (!file) texts.push(part.text.replace(/^\[shared file [^\]\n]*\]$/gm, '').trim());
    else {
      const excerpt = (file[2] ?? '').replace(/\s+/g, ' ').trim().slice(0, 120);
      files.push(`${JSON.parse(file[1] ?? '""')} (${excerpt}${(file[2]?.length ?? 0) > 120 ? '…' : ''})`);
    }
  }
  return { text: texts.join('\n').trim(), files, images };
}

const offered = (tools: readonly string[], name: string) => tools.includes(name);

/** The reply to a chat request: its messages as sent, and the names of the tools it offers. */
export function demoReply(messages: readonly ChatMessage[], tools: readonly string[]): DemoReply {
  const last = messages.at(-1);
  const system = messages.find((message) => message.role === 'system');
  // The session brain asks for a summary of older turns: give one, plainly.
  if (system && /running summary/i.test(read(system.content).text) && last?.role === 'user')
    return {
      text: `Demo summary: ${messages.length - 1} earlier messages (the demo model keeps no real summary).`,
    };
  if (last?.role === 'tool') {
    const asked = messages
      .flatMap((message) => message.tool_calls ?? [])
      .find((call) => call.id === last.tool_call_id)?.function?.name;
    return { text: `${demoNotice}\n\n${asked ?? 'The tool'} answered: ${read(last.content).text}` };
  }
  const { text, files, images } = read(last?.content);
  const words = text.replace(/^\S+:\s/, '');
  const restart = /\brestart(?:s|ing)?\s+(?:the\s+)?([\w.-]+)/i.exec(words);
  if (restart && offered(tools, 'demo_restart'))
    return { toolCall: { name: 'demo_restart', arguments: JSON.stringify({ service: restart[1] }) } };
  const lookup = /\b(?:look\s*up|status\s+of|check)\s+(?:the\s+)?([\w.-]+)/i.exec(words);
  if (lookup && offered(tools, 'demo_lookup'))
    return { toolCall: { name: 'demo_lookup', arguments: JSON.stringify({ name: lookup[1] }) } };
  const lines = [demoNotice, '', text ? `You wrote: “${text}”` : 'You sent no text.'];
  if (files.length > 0) lines.push(`Files I was given: ${files.join('; ')}.`);
  if (images > 0) lines.push(`Images I was shown: ${images} (the demo cannot see them).`);
  lines.push(
    '',
    'Try “restart payments-api” to see a tool call wait for approval, or “look up payments-api”.',
  );
  return { text: lines.join('\n') };
}
