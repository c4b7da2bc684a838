// Kafka's compression codecs beyond the gzip kafkajs ships. kafkajs throws on a Snappy, LZ4
// or ZSTD record batch ("not implemented"), which crashes its consumer; producers (Java's,
// librdkafka's) commonly compress with them, and a topic's `compression.type` makes the broker
// recompress whatever was produced. Registered once for every kafkajs client of the process.
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import kafkajs from 'kafkajs';
import type * as Lz4 from 'lz4-napi';
import type * as Snappy from 'snappy';

// Native modules, required when a batch first needs them: most clusters never send these
// codecs, and a start that does not load them stays as quick as before (issue 15's bound).
const require = createRequire(import.meta.url);
let snappy: typeof Snappy | undefined;
let lz4: typeof Lz4 | undefined;
const loadSnappy = (): typeof Snappy => (snappy ??= require('snappy') as typeof Snappy);
const loadLz4 = (): typeof Lz4 => (lz4 ??= require('lz4-napi') as typeof Lz4);

/** kafkajs hands a codec the encoder of the records to compress. */
export interface RecordsEncoder {
  buffer: Buffer;
}

/** What kafkajs's codec table holds for each codec. */
export interface Codec {
  compress(encoder: RecordsEncoder): Promise<Buffer>;
  decompress(buffer: Buffer): Promise<Buffer>;
}

/**
 * The framing Kafka's Java client writes around Snappy blocks (xerial snappy-java's
 * SnappyOutputStream): a 16-byte header, then blocks of a 4-byte big-endian length and that
 * many bytes of raw Snappy. Other producers send one raw Snappy block; both are read.
 */
const XERIAL_MAGIC = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
const XERIAL_HEADER_BYTES = 16;
// snappy-java's default block size: what a Java consumer reads without surprise.
const XERIAL_BLOCK_BYTES = 32 * 1024;

const hasXerialHeader = (buffer: Buffer): boolean =>
  buffer.length >= XERIAL_HEADER_BYTES && buffer.subarray(0, XERIAL_MAGIC.length).equals(XERIAL_MAGIC);

async function snappyUncompress(block: Uint8Array): Promise<Buffer> {
  return (await loadSnappy().uncompress(block, { asBuffer: true })) as Buffer;
}

export const snappyCodec: Codec = {
  async compress({ buffer }) {
    const header = Buffer.alloc(XERIAL_HEADER_BYTES);
    XERIAL_MAGIC.copy(header);
    header.writeInt32BE(1, 8); // version
    header.writeInt32BE(1, 12); // the oldest version that reads it
    const parts: Buffer[] = [header];
    for (let start = 0; start < buffer.length; start += XERIAL_BLOCK_BYTES) {
      const block = await loadSnappy().compress(buffer.subarray(start, start + XERIAL_BLOCK_BYTES));
      const length = Buffer.alloc(4);
      length.writeInt32BE(block.length);
      parts.push(length, block);
    }
    return Buffer.concat(parts);
  },
  async decompress(buffer) {
    if (!hasXerialHeader(buffer)) return snappyUncompress(buffer);
    const blocks: Buffer[] = [];
    let at = XERIAL_HEADER_BYTES;
    while (at < buffer.length) {
      if (at + 4 > buffer.length) throw new Error('snappy: a block length cut short');
      const length = buffer.readInt32BE(at);
      at += 4;
      if (length < 0 || at + length > buffer.length) throw new Error('snappy: a block cut short');
      blocks.push(await snappyUncompress(buffer.subarray(at, at + length)));
      at += length;
    }
    return Buffer.concat(blocks);
  },
};

/** Kafka's LZ4 is the standard LZ4 frame format (KIP-57) since message format v1. */
export const lz4Codec: Codec = {
  compress: ({ buffer }) => loadLz4().compressFrame(buffer),
  decompress: (buffer) => loadLz4().decompressFrame(buffer),
};

// node:zlib speaks ZSTD since Node 23.8 (no native module to install).
const zstdCompress = promisify(zlib.zstdCompress);
const zstdDecompress = promisify(zlib.zstdDecompress);

export const zstdCodec: Codec = {
  compress: ({ buffer }) => zstdCompress(buffer),
  decompress: (buffer) => zstdDecompress(buffer),
};

/** Makes every kafkajs client of the process read and write Snappy, LZ4 and ZSTD batches. */
export function installCompressionCodecs(): void {
  // Not a named export node finds in kafkajs's CommonJS: the codec table is the module's own.
  const { CompressionCodecs, CompressionTypes } = kafkajs;
  CompressionCodecs[CompressionTypes.Snappy] = () => snappyCodec;
  CompressionCodecs[CompressionTypes.LZ4] = () => lz4Codec;
  CompressionCodecs[CompressionTypes.ZSTD] = () => zstdCodec;
}
