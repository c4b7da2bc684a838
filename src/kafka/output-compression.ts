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
