import { truncateText } from '../../text/index.js';

/** Lines that usually say why a process died; start-up chatter and stack frames do not. */
const notable = /\b(error|exception|fatal|panic|cannot|denied|not found|failed|refused|invalid)\b/i;
const maxLineChars = 200;

/**
 * The recent stderr of a child, kept so a start-up failure or a crash can be explained in the server's
 * status ("Connection closed" alone tells an operator nothing).
 */
export class StderrTail {
  private lines: string[] = [];

  constructor(private readonly capacity = 20) {}

  push(line: string): void {
    this.lines.push(truncateText(line, maxLineChars));
    if (this.lines.length > this.capacity) this.lines.shift();
  }

  clear(): void {
    this.lines = [];
  }

  /** The first two notable lines, as a suffix for an error message; empty when there are none. */
  explanation(): string {
    const chosen = this.lines.filter((line) => notable.test(line)).slice(0, 2);
    return chosen.length === 0 ? '' : ` (stderr: ${chosen.map((line) => line.trim()).join(' | ')})`;
  }
}
