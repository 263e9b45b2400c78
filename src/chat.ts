import { randomUUID } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { isApprovalCommand, resolveApprovalCommand } from './adapters/terminal-chat/approval-commands.js';
import {
  approvalHint,
  ConsoleAdapter,
  dim,
  renderProgress,
  type TurnEnd,
  terminalAddress,
} from './adapters/terminal-chat/console-adapter.js';
import { readAttachment } from './adapters/terminal-chat/files.js';
import { TerminalQuestion } from './adapters/terminal-chat/question-prompts.js';
import { createButler } from './app/index.js';
import { fileOptions } from './app/turns.js';
import { loadDotEnv } from './config/dot-env.js';
import { loadConfig } from './config/index.js';
import { type ApprovalCard, pendingCalls } from './core/contracts/approval-card.js';
import { ConfigError, errorText } from './core/contracts/errors.js';
import type { ChatUser, ConversationAddress } from './core/contracts/events.js';
import type { InboundFile } from './core/contracts/files.js';
import { createLogger } from './observability/logger.js';

/**
 * `npm run chat`: a conversation with Butler in the terminal, through the same core, storage and
 * approvals as Slack and Feishu. Approval cards become a prompt: /approve, /reject <reason> or
 * /approve-conversation, with a call's number or `all` when the card lists several.
 */

const help =
  'Commands: /attach <path> [message] (share a file)  /approve [n|all]  /reject [n|all] <reason>  ' +
  '/approve-conversation [n] (approve that tool here for a while)  /as <user> (act as another user)  ' +
  '/stop (stop the answer; Ctrl+C too)  /new (new conversation)  /quit';

function load() {
  loadDotEnv();
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

async function main(): Promise<void> {
  const { config } = load();
  if (!config.model) {
    process.stderr.write(
      'npm run chat needs a model. Set BUTLER_MODEL, and BUTLER_BASE_URL / BUTLER_API_TOKEN for your endpoint, e.g.\n' +
        '  BUTLER_BASE_URL=http://localhost:11434/v1 BUTLER_MODEL=llama3.1 npm run chat\n' +
        'or try the scripted demo model (no LLM, no key):\n' +
        '  BUTLER_MODEL=demo npm run chat\n',
    );
    process.exit(1);
  }
  // Logs go to a file: a failing model's stack trace in the terminal would be read as part of the chat.
  mkdirSync(config.dataDir, { recursive: true });
  const logFile = join(config.dataDir, 'chat.log');
  const logger = createLogger({
    level: config.logLevel,
    serviceName: config.serviceName,
    destination: createWriteStream(logFile, { flags: 'a' }),
  });
  const adapter = new ConsoleAdapter(process.stdout, config.file.files.terminalDirectory);
  // The log goes to its file: say here why the first start takes a while.
  if (!config.databaseUrl && !existsSync(join(config.dataDir, 'pglite')))
    process.stdout.write(
      dim(`Creating the embedded database in ${config.dataDir} (first start only: about 10 s)…\n`),
    );
  // Connect links (servers behind OAuth) lead to pages this chat serves itself, on loopback.
  const butler = await createButler(config, { logger, adapters: [adapter], listen: 'connect-pages' });
  try {
    await butler.start();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    process.stderr.write(
      `Port ${config.port} is taken, and the chat serves its Connect pages there (is \`npm start\` running? It cannot share the embedded database with the chat anyway). Stop it, or set PORT (and BUTLER_PUBLIC_URL to match).\n`,
    );
    process.exit(1);
  }

  let user: ChatUser = { id: userInfo().username, name: userInfo().username };
  let address: ConversationAddress = terminalAddress;
  let waiting: ApprovalCard | undefined;
  /** A server's question being asked at the prompt, field by field. */
  let question: TerminalQuestion | undefined;
  const ended = (end: TurnEnd) => {
    if (end.kind === 'card') waiting = end.card;
    if (end.kind === 'question') {
      question = new TerminalQuestion(end.form);
      process.stdout.write(question.start());
    }
  };
  /** While Butler answers, `/stop` (or Ctrl+C) stops the turn; the line is read again afterwards. */
  let answering = false;
  let stopsTaken = 0;
  const settle = async (end: Promise<TurnEnd>) => {
    answering = true;
    try {
      ended(await end);
    } finally {
      answering = false;
    }
  };
  const stopTurn = async () => {
    const status = await butler.service.stop({ address, user, isDirect: true });
    if (status === 'stopping') adapter.hush();
    process.stdout.write(status === 'stopping' ? '\n(stopping…)\n' : '\n(nothing to stop yet; try again)\n');
  };
  const send = async (text: string, files: InboundFile[] = []) => {
    const end = adapter.nextTurnEnd();
    const id = randomUUID();
    const accepted = await butler.service.accept({
      kind: 'message',
      address,
      messageId: id,
      eventId: id,
      dedupKey: id,
      user,
      text,
      ...(files.length > 0 ? { files } : {}),
      isMention: true,
      isDirect: true,
      sentAt: new Date().toISOString(),
    });
    if (accepted.status === 'accepted') await settle(end);
    else process.stdout.write(`(not accepted: ${accepted.status})\n`);
  };
  const { maxFileBytes } = fileOptions(config);

  const model = butler.demo
    ? `the DEMO model (scripted replies, not an LLM; try "restart payments-api"${butler.demo.approver ? ', then /as demo-approver and /approve' : ''})`
    : config.model.model;
  const connectPages =
    butler.port > 0
      ? `\n${dim(`Connect links open on this machine: ${config.publicUrl} (served here on port ${butler.port})`)}`
      : '';
  process.stdout.write(
    `Butler chat with ${model}. You are "${user.id}". ${help}\n${dim(`Logs: ${logFile}`)}${connectPages}\n\n`,
  );
  // The line iterator queues what is typed while Butler answers; nothing typed ahead is lost.
  const terminal = createInterface({ input: process.stdin, output: process.stdout });
  terminal.on('line', (typed) => {
    if (!answering || typed.trim() !== '/stop') return;
    stopsTaken += 1;
    void stopTurn();
  });
  terminal.on('SIGINT', () => {
    if (answering) void stopTurn();
    else terminal.close();
  });
  const prompt = () => {
    terminal.setPrompt(`${user.id} › `);
    terminal.prompt();
  };
  adapter.onUnawaitedEnd((end) => {
    ended(end);
    prompt();
  });
  /** A line typed while a question is asked: the field's value, or the answer to the whole question. */
  const answerQuestion = async (asked: TerminalQuestion, line: string) => {
    const step = asked.take(line);
    if ('ask' in step) return void process.stdout.write(step.ask);
    const end = adapter.nextTurnEnd();
    const result = await butler.service.answerInput({
      user: { ...user, platform: 'console' },
      ...step.answer,
    });
    if (!result.ok) {
      if (result.errors) return void process.stdout.write(asked.retry(result.errors));
      question = undefined;
      return void process.stdout.write(`${result.message}\n`);
    }
    if (asked.advance()) return void process.stdout.write(asked.start());
    question = undefined;
    if (result.status === 'answered') await settle(end);
  };
  prompt();
  for await (const input of terminal) {
    const line = input.trim();
    if (!line && !question) {
      prompt();
      continue;
    }
    const [command, ...rest] = line.split(/\s+/);
    const argument = rest.join(' ');
    if (command === '/quit' || command === '/exit') break;
    if (question && !['/help', '/as', '/stop'].includes(command ?? '')) {
      await answerQuestion(question, input);
      prompt();
      continue;
    }
    if (command === '/stop') {
      // A /stop typed while Butler answered was taken then (and the prompt came back with the turn's end); at
      // the prompt nothing of this chat runs.
      if (stopsTaken > 0) {
        stopsTaken -= 1;
        continue;
      }
      process.stdout.write('Nothing is running.\n');
    } else if (command === '/help') {
      process.stdout.write(`${help}\n`);
    } else if (command === '/as' && argument) {
      user = { id: argument, name: argument };
      process.stdout.write(`You are now "${argument}".\n`);
    } else if (command === '/attach') {
      const attached = await readAttachment(argument, maxFileBytes);
      if (!attached.ok) process.stdout.write(`${attached.message}\n`);
      else {
        const shared = await butler.service
          .shareFile({ address, user, file: attached.file })
          .catch((error: unknown) => errorText(error));
        if (typeof shared === 'string') process.stdout.write(`(not shared: ${shared})\n`);
        else await send(attached.text, [shared]);
      }
    } else if (command === '/new') {
      address = { ...address, thread: randomUUID() };
      process.stdout.write('Started a new conversation.\n');
    } else if (isApprovalCommand(command)) {
      const resolved = waiting
        ? resolveApprovalCommand(waiting, command, argument, user)
        : { ok: false as const, message: 'No approval is waiting.' };
      if (!resolved.ok) {
        process.stdout.write(`${resolved.message}\n`);
        prompt();
        continue;
      }
      const end = adapter.nextTurnEnd();
      const result = await butler.service.decide(resolved.input);
      const rest = result.card && pendingCalls(result.card).length > 0 ? result.card : undefined;
      if (!result.ok) {
        process.stdout.write(`${result.message}\n`);
        // A refusal leaves the card as it was; otherwise only what is still pending keeps waiting.
        if (result.code !== 'not_authorized') waiting = rest;
        prompt();
        continue;
      }
      if (result.message) process.stdout.write(`${result.message}\n`);
      if (rest) {
        // The turn goes on only once every call on the card is decided.
        waiting = rest;
        process.stdout.write(`${renderProgress(rest)}\n  ${dim(approvalHint(rest))}\n`);
        prompt();
        continue;
      }
      waiting = undefined;
      await settle(end);
    } else {
      await send(line);
    }
    prompt();
  }
  terminal.close();
  await butler.stop();
}

// Once Butler has stopped (its database closed), the chat is over: as `npm start` does, exit rather than wait
// for whatever a dependency still holds open (an MCP server's stream, a kept-alive socket) to close.
main()
  .then(() => process.exit(0))
  .catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
