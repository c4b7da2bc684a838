// kafkajs's own entries reach the operator through the project's logger, at the level the
// command asks for: run's are warnings (what kafkajs retries through an outage), a one-shot
// command's are debug detail behind its own coded line.
import { createServer, type AddressInfo } from 'node:net';
import { Kafka, logLevel } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { kafkajsLogCreator, type KafkaLog } from '../../src/kafka/kafkajs-log.ts';
import { capturedLogger } from '../support/captured-log.ts';

/** A port that refuses connections: one just freed. */
async function refusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function connectionErrorLines(level: KafkaLog['level']) {
  const { logger, lines } = capturedLogger('debug');
  const kafka = new Kafka({
    clientId: 'kafkajs-log-test',
    brokers: [`127.0.0.1:${await refusedPort()}`],
    retry: { retries: 0 },
    logLevel: logLevel.ERROR,
    logCreator: kafkajsLogCreator({ logger, level }),
  });
  const admin = kafka.admin();
  await expect(admin.connect()).rejects.toThrow();
  return lines().filter((line) => line['kafkajs'] !== undefined);
}

describe('kafkajs entries', () => {
  it("are warnings in run's log, with kafkajs's namespace and fields", async () => {
    const lines = await connectionErrorLines('warn');
    expect(lines.length).toBeGreaterThan(0);
    expect(lines[0]).toMatchObject({
      level: 40,
      name: 'partner-enrich',
      msg: expect.stringContaining('Connection error'),
      kafkajs: { namespace: 'Connection', broker: expect.stringContaining('127.0.0.1:') },
    });
    expect(lines.every((line) => line.level === 40)).toBe(true);
  });

  it("are debug detail in a one-shot command's log", async () => {
    const lines = await connectionErrorLines('debug');
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.every((line) => line.level === 20)).toBe(true);
  });
});
