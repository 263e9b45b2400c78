import type { FileMention } from '../contracts/files.js';
import type { Store } from '../contracts/store.js';
import type { FileContent, PromptMessage } from '../model/model-client.js';

/**
 * Puts the content of shared files into a prompt: on the user messages of the recent window that shared
 * them, newest first, while their tokens fit `promptTokens` (images: `imagePromptTokens` of it). Older files, and files of compacted history,
 * stay what the message text says of them (a one-line description), so an image is not sent on every turn.
 */
export class FilePrompt {
  constructor(
    private readonly store: Store,
    private readonly options: { promptTokens: number; imagePromptTokens: number; vision: boolean },
  ) {}

  async expand(messages: readonly PromptMessage[]): Promise<PromptMessage[]> {
    const chosen = this.choose(messages);
    if (chosen.size === 0) return [...messages];
    const files = new Map((await this.store.files.list([...chosen])).map((file) => [file.id, file] as const));
    const contents = new Map<string, FileContent>();
    for (const file of files.values()) {
      if (file.kind === 'text' && file.text)
        contents.set(file.id, { type: 'text', name: file.name, text: file.text });
      if (file.kind === 'image' && file.previewSha256 && this.options.vision) {
        const bytes = await this.store.files.content(file.previewSha256);
        if (bytes)
          contents.set(file.id, {
            type: 'image',
            name: file.name,
            mimeType: file.previewMimeType ?? 'image/jpeg',
            base64: Buffer.from(bytes).toString('base64'),
          });
      }
    }
    return messages.map((message) => {
      if (message.role !== 'user' || !message.files?.length) return message;
      const fileContents = message.files.flatMap((file) => {
        const content = contents.get(file.id);
        return content ? [content] : [];
      });
      return fileContents.length > 0 ? { ...message, fileContents } : message;
    });
  }

  /** The ids of the files whose content fits, newest message first. */
  private choose(messages: readonly PromptMessage[]): Set<string> {
    const chosen = new Set<string>();
    let room = this.options.promptTokens;
    let imageRoom = this.options.imagePromptTokens;
    // The messages this turn answers (after Butler's last answer) show their images whatever the image budget.
    const answered = messages.findLastIndex((message) => message.role === 'assistant');
    for (const [index, message] of [...messages.entries()].reverse()) {
      if (message.role !== 'user') continue;
      const current = index > answered;
      for (const file of message.files ?? []) {
        const isImage = file.kind === 'image';
        if (!readable(file, this.options.vision) || file.tokens > room) continue;
        if (isImage && !current && file.tokens > imageRoom) continue;
        room -= file.tokens;
        if (isImage) imageRoom -= file.tokens;
        chosen.add(file.id);
      }
    }
    return chosen;
  }
}

const readable = (file: FileMention, vision: boolean) =>
  file.tokens > 0 && (file.kind === 'text' || (file.kind === 'image' && vision));
