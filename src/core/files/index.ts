import type { Logger } from '../contracts/logger.js';
import type { Store } from '../contracts/store.js';
import { FileDelivery } from './file-delivery.js';
import { FileIntake, type FileLimits } from './file-intake.js';
import { FilePrompt } from './file-prompt.js';

/**
 * The files room's door: shared files in (fetched once, read, stored by hash), their content in prompts
 * (within a token budget), and files tools or the model produce sent out once.
 */
export interface Files {
  intake: FileIntake;
  prompt: FilePrompt;
  delivery: FileDelivery;
  /** Where people reach Butler, for links to stored files where a platform cannot take uploads. */
  publicUrl?: string;
}

export interface FilesOptions extends FileLimits {
  promptTokens: number;
  imagePromptTokens: number;
  publicUrl?: string;
}

export function createFiles(store: Store, options: FilesOptions, logger: Logger): Files {
  const intake = new FileIntake(store, options, logger);
  return {
    intake,
    prompt: new FilePrompt(store, {
      promptTokens: options.promptTokens,
      imagePromptTokens: options.imagePromptTokens,
      vision: options.vision,
    }),
    delivery: new FileDelivery(intake, store),
    ...(options.publicUrl ? { publicUrl: options.publicUrl } : {}),
  };
}

export { createAttachFileTool } from './attach-file-tool.js';
export { type FileBudget, fileLines, newFileBudget, type ReceivedFiles } from './file-intake.js';
