import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeModelServer, startFakeModelServer } from '../helpers/fake-model-server.js';

const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Weather for a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

describe('fake model server', () => {
  let server: FakeModelServer;
  let client: OpenAI;

  beforeAll(async () => {
    server = await startFakeModelServer();
    client = new OpenAI({ baseURL: server.baseUrl, apiKey: 'test', maxRetries: 0 });
  });
  beforeEach(() => server.reset());
  afterAll(() => server.close());

  it('streams text in order and ends with a usage chunk that has no choices', async () => {
    server.enqueue({
      text: 'Hello there, how are you today?',
      usage: { promptTokens: 11, completionTokens: 7 },
    });

    const stream = await client.chat.completions.create({
      model: 'fake-model',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);

    const deltas = chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.delta));
    expect(deltas[0]?.role).toBe('assistant');
    expect(deltas.map((delta) => delta.content ?? '').join('')).toBe('Hello there, how are you today?');
    expect(deltas.filter((delta) => delta.content).length).toBeGreaterThan(1);
    expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe('stop');
    const usageChunk = chunks.at(-1);
    expect(usageChunk?.choices).toEqual([]);
    expect(usageChunk?.usage).toEqual({ prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 });
  });

  it('uses the scripted chunks verbatim and estimates usage when none is scripted', async () => {
    server.enqueue({ text: 'abcdef', chunks: ['ab', 'cd', 'ef'], chunkDelayMs: 5 });

    const stream = await client.chat.completions.create({
      model: 'fake-model',
      messages: [{ role: 'user', content: '12345678' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const contents: string[] = [];
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta.content) contents.push(chunk.choices[0].delta.content);
      if (chunk.usage) usage = chunk.usage;
    }

    expect(contents).toEqual(['ab', 'cd', 'ef']);
    expect(usage).toEqual({ prompt_tokens: 2, completion_tokens: 2, total_tokens: 4 });
  });

  it('streams tool call fragments that reassemble into name, arguments and id', async () => {
    const weatherArguments = JSON.stringify({ city: 'Amsterdam', unit: 'celsius' });
    server.enqueue({
      toolCalls: [
        { id: 'call_weather', name: 'get_weather', arguments: weatherArguments },
        { name: 'get_time', arguments: '{"zone":"Europe/Amsterdam"}' },
      ],
    });

    const stream = await client.chat.completions.create({
      model: 'fake-model',
      messages: [{ role: 'user', content: 'weather?' }],
      tools: [weatherTool],
      stream: true,
    });
    const calls: Array<{ id: string; name: string; arguments: string; fragments: number }> = [];
    let finishReason: string | null | undefined;
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      for (const fragment of choice?.delta.tool_calls ?? []) {
        const call = calls[fragment.index] ?? { id: '', name: '', arguments: '', fragments: 0 };
        calls[fragment.index] = call;
        call.fragments += 1;
        if (fragment.id) call.id = fragment.id;
        if (fragment.function?.name) call.name += fragment.function.name;
        if (fragment.function?.arguments) call.arguments += fragment.function.arguments;
      }
      if (choice?.finish_reason) finishReason = choice.finish_reason;
    }

    expect(finishReason).toBe('tool_calls');
    expect(calls[0]).toMatchObject({ id: 'call_weather', name: 'get_weather', arguments: weatherArguments });
    expect(calls[0]?.fragments).toBeGreaterThan(2);
    expect(calls[1]).toMatchObject({ name: 'get_time', arguments: '{"zone":"Europe/Amsterdam"}' });
    expect(calls[1]?.id).toMatch(/^call_/);
  });

  it('surfaces a scripted 429 as a RateLimitError', async () => {
    server.enqueue({ status: 429, headers: { 'retry-after': '0' } });

    const request = client.chat.completions.create({
      model: 'fake-model',
      messages: [{ role: 'user', content: 'hi' }],
    });

    await expect(request).rejects.toBeInstanceOf(OpenAI.RateLimitError);
    await expect(request).rejects.toMatchObject({ status: 429, code: 'rate_limit_exceeded' });
  });

  it('serves the next scripted reply when the SDK retries after a 429', async () => {
    server.enqueue({ status: 429, headers: { 'retry-after': '0' } }, { text: 'second time lucky' });
    const retryingClient = client.withOptions({ maxRetries: 1 });

    const completion = await retryingClient.chat.completions.create({
      model: 'fake-model',
      messages: [{ role: 'user', content: 'hi' }],
    });

    expect(completion.choices[0]?.message.content).toBe('second time lucky');
    expect(server.requests).toHaveLength(2);
  });

  it('hangs until the SDK times out', async () => {
    server.enqueue({ hang: true });

    const request = client.chat.completions.create(
      { model: 'fake-model', messages: [{ role: 'user', content: 'hi' }] },
      { timeout: 200 },
    );

    await expect(request).rejects.toBeInstanceOf(OpenAI.APIConnectionTimeoutError);
  });

  it('records messages, tools, stream flag and headers of each request', async () => {
    server.enqueue((request) => ({ text: `you said ${String(request.messages.at(-1)?.content)}` }));

    const completion = await client.chat.completions.create({
      model: 'fake-model',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'ping' },
      ],
      tools: [weatherTool],
    });
    await server.waitForRequests(1);

    expect(completion.choices[0]?.message.content).toBe('you said ping');
    const [recorded] = server.requests;
    expect(recorded).toMatchObject({
      model: 'fake-model',
      stream: false,
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'ping' },
      ],
      tools: [weatherTool],
    });
    expect(recorded?.headers.authorization).toBe('Bearer test');
  });

  it('answers non-streaming requests with text or tool calls and usage', async () => {
    server.enqueue(
      { text: 'plain answer' },
      { toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{}' }] },
    );

    const text = await client.chat.completions.create({
      model: 'fake-model',
      messages: [{ role: 'user', content: 'hello' }],
    });
    const tools = await client.chat.completions.create({
      model: 'fake-model',
      messages: [{ role: 'user', content: 'hello' }],
      tools: [weatherTool],
    });

    expect(text.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: 'plain answer' } });
    expect(text.usage).toEqual({ prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 });
    expect(tools.choices[0]?.finish_reason).toBe('tool_calls');
    expect(tools.choices[0]?.message.tool_calls).toEqual([
      { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } },
    ]);
  });

  it('falls back to the fallback reply when the queue is empty', async () => {
    server.setFallback({ text: 'fallback' });

    const completion = await client.chat.completions.create({
      model: 'fake-model',
      messages: [{ role: 'user', content: 'hi' }],
    });

    expect(completion.choices[0]?.message.content).toBe('fallback');
  });

  it('breaks the stream when scripted to fail mid-stream', async () => {
    server.enqueue({ streamThenFail: 'partial answer that never' });

    const stream = await client.chat.completions.create({
      model: 'fake-model',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    });
    let received = '';
    const consume = async () => {
      for await (const chunk of stream) received += chunk.choices[0]?.delta.content ?? '';
    };

    await expect(consume()).rejects.toThrow();
    expect(received).toBe('partial answer that never');
  });

  it('sends raw SSE payloads so malformed JSON reaches the client', async () => {
    server.enqueue({ rawSse: ['{not json', '[DONE]'] });

    const stream = await client.chat.completions.create({
      model: 'fake-model',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    });
    const consume = async () => {
      for await (const _chunk of stream) {
        // draining is enough; the malformed payload should throw
      }
    };

    await expect(consume()).rejects.toThrow();
  });

  it('survives a client that aborts mid-stream', async () => {
    server.enqueue({ text: 'one two three four five six seven eight nine', chunkDelayMs: 30 });
    const abort = new AbortController();
    const stream = await client.chat.completions.create(
      { model: 'fake-model', messages: [{ role: 'user', content: 'hi' }], stream: true },
      { signal: abort.signal },
    );
    let received = '';
    for await (const chunk of stream) {
      received += chunk.choices[0]?.delta.content ?? '';
      // Stop reading too: chunks that came in one read with this one are already buffered.
      if (received) {
        abort.abort();
        break;
      }
    }

    // The SDK ends an aborted stream quietly; the server must keep serving afterwards.
    expect(received).toBe('one two three ');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const next = await client.chat.completions.create({ model: 'fake-model', messages: [] });
    expect(next.choices[0]?.message.content).toBe('ok');
  });

  it('closes promptly while a request is still hanging', async () => {
    const hangingServer = await startFakeModelServer();
    hangingServer.enqueue({ hang: true });
    const hangingClient = new OpenAI({ baseURL: hangingServer.baseUrl, apiKey: 'test', maxRetries: 0 });
    const request = hangingClient.chat.completions.create({ model: 'fake-model', messages: [] });

    await hangingServer.waitForRequests(1);
    await hangingServer.close();

    await expect(request).rejects.toBeInstanceOf(OpenAI.APIConnectionError);
  });

  it('lists models and returns 404 for unknown routes', async () => {
    const models = await client.models.list();
    expect(models.data.map((model) => model.id)).toEqual(['fake-model']);

    const response = await fetch(`${server.baseUrl}/embeddings`, { method: 'POST', body: '{}' });
    expect(response.status).toBe(404);
  });
});
