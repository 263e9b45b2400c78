import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Langfuse's OTLP ingestion endpoint, recording each span it receives (OTLP/HTTP JSON), and its public scores
 * API (`POST /api/public/scores`), recording each score it accepts.
 */

export interface ReceivedSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  attributes: Record<string, unknown>;
}

/** A score as `POST /api/public/scores` takes it (the fields Butler sends). */
export interface ReceivedScore {
  id?: string;
  traceId?: string;
  name: string;
  value: number | string;
  dataType?: string;
  comment?: string;
  metadata?: Record<string, unknown>;
  authorization: string;
}

export interface FakeLangfuse {
  baseUrl: string;
  spans: ReceivedSpan[];
  scores: ReceivedScore[];
  authorizations: string[];
  /** Answer every export with this status (500 simulates an outage). */
  status: number;
  close(): Promise<void>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: number | string;
  doubleValue?: number;
  boolValue?: boolean;
  /** OTLP arrays (trace tags): a list of values. */
  arrayValue?: { values?: OtlpValue[] };
}

function value(attribute: OtlpValue): unknown {
  if (attribute.arrayValue) return (attribute.arrayValue.values ?? []).map(value);
  return attribute.stringValue ?? attribute.intValue ?? attribute.doubleValue ?? attribute.boolValue;
}

export async function startFakeLangfuse(): Promise<FakeLangfuse> {
  const fake: FakeLangfuse = {
    baseUrl: '',
    spans: [],
    scores: [],
    authorizations: [],
    status: 200,
    close: async () => {},
  };
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    if (request.method === 'POST' && request.url === '/api/public/scores') {
      const answer = receiveScore(fake, String(request.headers.authorization), Buffer.concat(chunks));
      response
        .writeHead(answer.status, { 'content-type': 'application/json' })
        .end(JSON.stringify(answer.body));
      return;
    }
    if (request.url !== '/api/public/otel/v1/traces') {
      response.writeHead(404).end();
      return;
    }
    fake.authorizations.push(String(request.headers.authorization));
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
      resourceSpans: Array<{
        scopeSpans: Array<{
          spans: Array<{
            name: string;
            traceId: string;
            spanId: string;
            parentSpanId?: string;
            attributes: Array<{ key: string; value: OtlpValue }>;
          }>;
        }>;
      }>;
    };
    if (fake.status === 200) {
      for (const resource of body.resourceSpans) {
        for (const scope of resource.scopeSpans) {
          for (const span of scope.spans) {
            fake.spans.push({
              name: span.name,
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId || undefined,
              attributes: Object.fromEntries(span.attributes.map((entry) => [entry.key, value(entry.value)])),
            });
          }
        }
      }
    }
    response.writeHead(fake.status, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return fake;
}

/**
 * Like Langfuse: Basic auth with the project's keys, a name, a value (boolean scores 0 or 1) and what it
 * scores; answers `{id}`. A score sent again with the same id replaces the first (Langfuse upserts on id).
 */
function receiveScore(
  fake: FakeLangfuse,
  authorization: string,
  raw: Buffer,
): { status: number; body: unknown } {
  if (!authorization.startsWith('Basic ')) return { status: 401, body: { message: 'unauthorized' } };
  let score: Omit<ReceivedScore, 'authorization'>;
  try {
    score = JSON.parse(raw.toString('utf8'));
  } catch {
    return { status: 400, body: { message: 'invalid JSON' } };
  }
  const boolean = score.dataType === 'BOOLEAN';
  if (
    typeof score.name !== 'string' ||
    !score.traceId ||
    (typeof score.value !== 'number' && typeof score.value !== 'string') ||
    (boolean && score.value !== 0 && score.value !== 1)
  )
    return { status: 400, body: { message: 'invalid score' } };
  if (fake.status !== 200) return { status: fake.status, body: {} };
  const id = score.id ?? `score-${fake.scores.length + 1}`;
  fake.scores = fake.scores.filter((earlier) => earlier.id !== id);
  fake.scores.push({ ...score, id, authorization });
  return { status: 200, body: { id } };
}
