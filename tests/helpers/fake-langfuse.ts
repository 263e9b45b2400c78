import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Langfuse's OTLP ingestion endpoint, recording each span it receives (OTLP/HTTP JSON). */

export interface ReceivedSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  attributes: Record<string, unknown>;
}

export interface FakeLangfuse {
  baseUrl: string;
  spans: ReceivedSpan[];
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
}

function value(attribute: OtlpValue): unknown {
  return attribute.stringValue ?? attribute.intValue ?? attribute.doubleValue ?? attribute.boolValue;
}

export async function startFakeLangfuse(): Promise<FakeLangfuse> {
  const fake: FakeLangfuse = {
    baseUrl: '',
    spans: [],
    authorizations: [],
    status: 200,
    close: async () => {},
  };
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
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
