// The codecs `kafka.compression` names, apart from the codecs themselves (compression-codecs.ts),
// so that reading the configuration loads no Kafka client.
import type { CompressionTypes } from 'kafkajs';

export const OUTPUT_COMPRESSIONS = ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const;

export type OutputCompression = (typeof OUTPUT_COMPRESSIONS)[number];

// Kafka's record batch attribute of each codec, which kafkajs's CompressionTypes enum holds;
// the enum is a value of kafkajs's module, which a type import does not load.
const ATTRIBUTE: Record<OutputCompression, number> = { none: 0, gzip: 1, snappy: 2, lz4: 3, zstd: 4 };

/** What kafkajs's send takes for a codec's name. */
export const compressionType = (name: OutputCompression): CompressionTypes =>
  ATTRIBUTE[name] as CompressionTypes;

/**
 * The part of a topic's max.message.bytes a batch's records may take before `name` compresses
 * them. A codec makes data that does not compress (random bytes in a dead letter) larger:
 * measured on random records, gzip and Snappy add 0.031 % and about 25 bytes, LZ4 and ZSTD
 * less. A batch cut by its uncompressed size to the limit was then refused by the broker,
 * fatal, at every restart. The margin is three times that rate and 64 bytes.
 */
export function compressedLimit(limit: number, name: OutputCompression): number {
  return name === 'none' ? limit : limit - Math.ceil(limit / 1_000) - 64;
}
