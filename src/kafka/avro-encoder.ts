// Confluent wire format encoding (magic byte, schema id, Avro body) for the output
// topics, with the schema ids registered once at start under the topic-value subjects.
import { SchemaType, type SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import { pipelineSchema, type SchemaName } from '../serde/schemas.ts';

export interface TopicEncoder {
  encode(value: object): Buffer;
}

/** Registers the schema under `<topic>-value` and returns an encoder for it. */
export async function registerTopicEncoder(
  registry: SchemaRegistry,
  topic: string,
  schemaName: SchemaName,
): Promise<TopicEncoder> {
  const schema = pipelineSchema(schemaName);
  const { id } = await registry.register(
    { type: SchemaType.AVRO, schema: schema.text },
    { subject: `${topic}-value` },
  );
  const header = Buffer.alloc(5);
  header.writeUInt8(0, 0);
  header.writeInt32BE(id, 1);
  return { encode: (value) => Buffer.concat([header, schema.type.toBuffer(value)]) };
}
