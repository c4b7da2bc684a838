import { randomBytes } from 'node:crypto';
import kafkajs from 'kafkajs';
import { compressSync } from 'snappy';
import { describe, expect, it } from 'vitest';
import {
  installCompressionCodecs,
  lz4Codec,
  snappyCodec,
  zstdCodec,
} from '../../src/kafka/compression-codecs.ts';
import { compressedLimit, compressionType } from '../../src/kafka/output-compression.ts';
import { RECORD_BATCH_OVERHEAD } from '../../src/kafka/record-size.ts';

/** `bytes` of records as a batch holds them: repetitive text, with some noise. */
function records(bytes: number): Buffer {
  const parts: Buffer[] = [];
  for (let i = 0, length = 0; length < bytes; i += 1) {
    const record = Buffer.concat([
      Buffer.from(`{"partnerId":"P-${i}","names":["Partner ${i}"]}`),
      randomBytes(20),
    ]);
    parts.push(record);
    length += record.length;
  }
  return Buffer.concat(parts).subarray(0, bytes);
}

describe('compression codecs (the real native and node:zlib implementations)', () => {
  it.each([
    ['snappy', snappyCodec],
    ['lz4', lz4Codec],
    ['zstd', zstdCodec],
  ] as const)(
    '%s: what it compresses decompresses to the same bytes, small and over several blocks',
    async (_, codec) => {
      for (const bytes of [0, 1, 5_000, 200_000]) {
        const plain = records(bytes);
        const compressed = await codec.compress({ buffer: plain });
        expect((await codec.decompress(compressed)).equals(plain)).toBe(true);
      }
    },
  );

  it("snappy writes the framing of Kafka's Java client: a 16-byte header, then length-prefixed blocks of 32 KiB", async () => {
    const compressed = await snappyCodec.compress({ buffer: records(100_000) });
    expect(compressed.subarray(0, 8)).toEqual(Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]));
    expect([compressed.readInt32BE(8), compressed.readInt32BE(12)]).toEqual([1, 1]);
    let at = 16;
    let blocks = 0;
    while (at < compressed.length) {
      at += 4 + compressed.readInt32BE(at);
      blocks += 1;
    }
    expect(at).toBe(compressed.length);
    expect(blocks).toBe(4); // 100,000 bytes in blocks of 32,768
  });

  it('snappy reads one raw block too, as producers without the framing send it', async () => {
    const plain = records(10_000);
    expect((await snappyCodec.decompress(compressSync(plain))).equals(plain)).toBe(true);
  });

  it('snappy: a framed batch cut short is an error, not fewer records', async () => {
    const compressed = await snappyCodec.compress({ buffer: records(50_000) });
    await expect(snappyCodec.decompress(compressed.subarray(0, compressed.length - 10))).rejects.toThrow(
      'snappy: a block cut short',
    );
  });

  it("installs the three codecs in kafkajs's table, which otherwise throws 'not implemented'", () => {
    const { CompressionCodecs, CompressionTypes } = kafkajs;
    installCompressionCodecs();
    expect(CompressionCodecs[CompressionTypes.Snappy]()).toBe(snappyCodec);
    expect(CompressionCodecs[CompressionTypes.LZ4]()).toBe(lz4Codec);
    expect(CompressionCodecs[CompressionTypes.ZSTD]()).toBe(zstdCodec);
  });
});

describe('compressedLimit', () => {
  it.each(['gzip', 'snappy', 'lz4', 'zstd'] as const)(
    'regression: %s made records that do not compress larger, so a batch cut by its uncompressed size to max.message.bytes was refused by the broker (fatal, at every restart); cut to compressedLimit it fits',
    async (name) => {
      installCompressionCodecs();
      const codec = (
        kafkajs.CompressionCodecs as unknown as Record<
          number,
          () => { compress(e: { buffer: Buffer }): Promise<Buffer> }
        >
      )[compressionType(name)];
      for (const limit of [1_000, 65_536, 1_048_588, 8_388_608]) {
        const recordsBytes = randomBytes(compressedLimit(limit, name) - RECORD_BATCH_OVERHEAD);
        const compressed = await codec?.().compress({ buffer: recordsBytes });
        expect(
          RECORD_BATCH_OVERHEAD + (compressed?.length ?? Infinity),
          `${name} at ${limit}`,
        ).toBeLessThanOrEqual(limit);
      }
    },
  );

  it('leaves the limit as it is without a codec', () => {
    expect(compressedLimit(1_048_588, 'none')).toBe(1_048_588);
  });
});
