// kafkajs's own log entries (its ERROR level only, kafkaClientConfig), routed into the
// project's logger. A one-shot command reports a failure in its own terms (a coded error, a
// line of its own): left to kafkajs's console logger, a refused topic creation printed
// kafkajs's JSON line before TOPIC_CREATE_REFUSED, so there they are debug detail. `run`
// keeps them at warn: they are the failures kafkajs retries through a broker outage, which an
// operator watches for before the process gives up. Either way they pass the logger's
// redaction of secrets, which kafkajs's console logger did not.
import type { logCreator } from 'kafkajs';
import type { Logger } from '../observability/logger.ts';

export interface KafkaLog {
  logger: Logger;
  level: 'warn' | 'debug';
}

export function kafkajsLogCreator({ logger, level }: KafkaLog): logCreator {
  return () =>
    ({ namespace, log }) => {
      // kafkajs's time and name: the project's line carries its own.
      const { message, timestamp: _time, logger: _name, ...fields } = log;
      logger[level]({ kafkajs: { namespace, ...fields } }, message);
    };
}
