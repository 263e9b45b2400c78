/**
 * What the demo model answers: a script, not a language model. It reads back what it was sent (files
 * included) and says what a tool answered, and a few phrases call tools, each only where that tool is offered:
 * "restart <service>" (`demo_restart`, which waits for an approval), "look up <service>" (`demo_lookup`),
 * "remind me in 1 minute to <something>" (`schedule_task`; the reminder's run is answered "Reminder: …"),
 * "send me a file" (`attach_file`, a made-up CSV), "use <server>" (a tool of a server behind OAuth, or its
 * connect tool while none is known: a Connect link), "ask <agent> to <task>" (`delegate`). Every reply starts
 * by saying it is a demo.
 */

/** A tool the request offers: its name, and whether it needs arguments the demo cannot make up. */
export interface DemoTool {
  name: string;
  needsArguments: boolean;
}

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

const offered = (tools: readonly DemoTool[], name: string) => tools.some((tool) => tool.name === name);
const call = (name: string, input: Record<string, unknown>): DemoReply => ({
  toolCall: { name, arguments: JSON.stringify(input) },
});

const demoFile = 'service,status,instances\npayments-api,healthy,3\nsearch,degraded,2\n';

/** A scripted phrase's tool call, when the message has one and its tool is offered. */
function intent(words: string, tools: readonly DemoTool[]): DemoReply | undefined {
  const remind = /\bremind me in (\d{1,3}) (minute|hour)s?(?: to)? (.+)/i.exec(words);
  if (remind && offered(tools, 'schedule_task'))
    return call('schedule_task', {
      prompt: `Remind me to ${remind[3]}`,
      at: `PT${remind[1]}${remind[2]?.toLowerCase() === 'hour' ? 'H' : 'M'}`,
    });
  if (/\b(?:send|give|make)\b.*\b(?:file|csv)\b/i.test(words) && offered(tools, 'attach_file'))
    return call('attach_file', { filename: 'demo-services.csv', content: demoFile, mimeType: 'text/csv' });
  const use = /\b(?:use|connect)\s+([\w-]+)/i.exec(words);
  const server = use?.[1]?.toLowerCase();
  if (server) {
    const own = tools.filter((tool) => tool.name.startsWith(`${server}__`));
    const ready = own.find((tool) => tool.name !== `${server}__connect` && !tool.needsArguments);
    const target = ready ?? own.find((tool) => tool.name === `${server}__connect`);
    if (target) return call(target.name, {});
  }
  const ask = /\bask (?:the )?([\w-]+)(?: agent)? to (.+)/i.exec(words);
  if (ask && offered(tools, 'delegate')) return call('delegate', { agent: ask[1], task: ask[2] });
  const restart = /\brestart(?:s|ing)?\s+(?:the\s+)?([\w.-]+)/i.exec(words);
  if (restart && offered(tools, 'demo_restart')) return call('demo_restart', { service: restart[1] });
  const lookup = /\b(?:look\s*up|status\s+of|check)\s+(?:the\s+)?([\w.-]+)/i.exec(words);
  if (lookup && offered(tools, 'demo_lookup')) return call('demo_lookup', { name: lookup[1] });
  return undefined;
}

/** The reply to a chat request: its messages as sent, and the tools it offers. */
export function demoReply(messages: readonly ChatMessage[], tools: readonly DemoTool[]): DemoReply {
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
  // A reminder's run: its prompt is the task's, written when it was made ("Remind me to …").
  const due = /\bRemind me to (.+)/i.exec(words);
  if (due) return { text: `${demoNotice}\n\n⏰ Reminder: ${due[1]}` };
  const scripted = intent(words, tools);
  if (scripted) return scripted;
  const lines = [demoNotice, '', text ? `You wrote: “${text}”` : 'You sent no text.'];
  if (files.length > 0) lines.push(`Files I was given: ${files.join('; ')}.`);
  if (images > 0) lines.push(`Images I was shown: ${images} (the demo cannot see them).`);
  const tries = suggestions(tools);
  if (tries.length > 0) lines.push('', `Try ${tries.join(', ')}.`);
  return { text: lines.join('\n') };
}

/** What the demo can show with the tools offered here. */
function suggestions(tools: readonly DemoTool[]): string[] {
  const servers = [
    ...new Set(tools.flatMap((tool) => (tool.name.endsWith('__connect') ? [tool.name.slice(0, -9)] : []))),
  ];
  return [
    ...(offered(tools, 'demo_restart')
      ? ['“restart payments-api” (a tool call that waits for approval)']
      : []),
    ...(offered(tools, 'demo_lookup') ? ['“look up payments-api”'] : []),
    ...(offered(tools, 'schedule_task') ? ['“remind me in 1 minute to check the deploy”'] : []),
    ...(offered(tools, 'attach_file') ? ['“send me a file”'] : []),
    ...servers.map((server) => `“use ${server}” (your own ${server} account)`),
    ...(offered(tools, 'delegate') ? ['“ask <agent> to <task>”'] : []),
  ];
}
