// A schema registry stand-in in this process: answers GET /schemas/ids/<id> as a Confluent
// registry does, from the answers a test gives it, and counts what it was asked. The real
// client (@kafkajs/confluent-schema-registry) talks to it over HTTP.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SchemaRegistry } from '@kafkajs/confluent-schema-registry';

export interface RegistryAnswer {
  status: number;
  body: unknown;
}

/** The registry's answer for an Avro writer schema. */
export const avroSchema = (schema: unknown): RegistryAnswer => ({
  status: 200,
  body: { schema: JSON.stringify(schema) },
});

export interface RegistryStandIn {
  url: string;
  client: SchemaRegistry;
  /** How often each schema id was asked for. */
  asked: Map<number, number>;
  close(): Promise<void>;
}

/** A registry's refusal of the credentials it was sent (401: wrong or expired, 403: not allowed). */
export const refusal = (status: 401 | 403): RegistryAnswer => ({
  status,
  body: {
    error_code: status === 401 ? 40101 : 40301,
    message: status === 401 ? 'Unauthorized' : 'Forbidden',
  },
});

/**
 * Ids without an answer get the registry's 404 (error code 40403). `everyRequest`, when given,
 * answers every request instead, as a registry refusing the client's credentials does.
 */
export async function startRegistryStandIn(
  answers: Record<number, RegistryAnswer>,
  everyRequest?: RegistryAnswer,
): Promise<RegistryStandIn> {
  const asked = new Map<number, number>();
  const server = createServer((request, response) => {
    const id = Number(/^\/schemas\/ids\/(\d+)/.exec(request.url ?? '')?.[1]);
    asked.set(id, (asked.get(id) ?? 0) + 1);
    const answer = everyRequest ??
      answers[id] ?? { status: 404, body: { error_code: 40403, message: 'Schema not found' } };
    response.setHeader('content-type', 'application/vnd.schemaregistry.v1+json');
    response.writeHead(answer.status).end(JSON.stringify(answer.body));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    client: new SchemaRegistry({ host: url }),
    asked,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The Confluent wire format: magic byte 0, the schema id, the Avro body. */
export function wire(schemaId: number, body: Buffer): Buffer {
  const header = Buffer.alloc(5);
  header.writeInt32BE(schemaId, 1);
  return Buffer.concat([header, body]);
}
