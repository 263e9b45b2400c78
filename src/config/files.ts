import { z } from 'zod';

/**
 * `files:` in the config file: how much of what people share Butler reads, and how much of it the model is
 * shown (docs/configuration.md, "Files"). A file past a limit is cut or skipped, and the reply says so.
 */
export const defaultFileLimits = {
  /** A larger file is not downloaded. */
  maxFileMegabytes: 20,
  /** All files of one turn together; past it the rest are skipped. */
  maxTurnMegabytes: 50,
  maxFilesPerTurn: 10,
  /** Pages of a PDF read at most. */
  maxPdfPages: 50,
  /** Characters of text kept of one file (a PDF's text, a CSV). */
  maxFileCharacters: 50_000,
  /** Characters of text of all files of one turn together. */
  maxTurnCharacters: 100_000,
  /** Longest side of the copy of an image the model gets, in pixels. */
  imageMaxPixels: 1568,
  /**
   * Tokens of file content (text and images) in one prompt: files of the newest messages of the recent
   * window first; older ones, and everything compacted, are named by their one-line description only.
   */
  promptTokens: 30_000,
  /**
   * Of `promptTokens`, what images of earlier turns may take (a 1920×1080 screenshot is 1,445 tokens as
   * shown): the newest two are shown again on later turns, older ones are named only. The images of the
   * messages a turn answers are always shown.
   */
  imagePromptTokens: 3_000,
  /** Where the terminal chat saves the files Butler sends (relative to where it runs). */
  terminalDirectory: 'butler-files',
  /**
   * Longest one file may take to read (a PDF's text, an image's copy), in seconds, off the main thread; past it
   * the person hears the file could not be read in time.
   */
  readSeconds: 10,
};

export const filesSchema = z
  .object({
    maxFileMegabytes: z.number().positive().max(1024).default(defaultFileLimits.maxFileMegabytes),
    maxTurnMegabytes: z.number().positive().max(4096).default(defaultFileLimits.maxTurnMegabytes),
    maxFilesPerTurn: z.number().int().positive().max(100).default(defaultFileLimits.maxFilesPerTurn),
    maxPdfPages: z.number().int().positive().max(2000).default(defaultFileLimits.maxPdfPages),
    maxFileCharacters: z
      .number()
      .int()
      .positive()
      .max(2_000_000)
      .default(defaultFileLimits.maxFileCharacters),
    maxTurnCharacters: z
      .number()
      .int()
      .positive()
      .max(4_000_000)
      .default(defaultFileLimits.maxTurnCharacters),
    imageMaxPixels: z.number().int().min(64).max(8192).default(defaultFileLimits.imageMaxPixels),
    promptTokens: z.number().int().min(0).max(2_000_000).default(defaultFileLimits.promptTokens),
    imagePromptTokens: z.number().int().min(0).max(2_000_000).default(defaultFileLimits.imagePromptTokens),
    terminalDirectory: z.string().min(1).default(defaultFileLimits.terminalDirectory),
    readSeconds: z.number().positive().max(300).default(defaultFileLimits.readSeconds),
  })
  .strict()
  .default(defaultFileLimits);

export type FilesConfig = z.infer<typeof filesSchema>;
