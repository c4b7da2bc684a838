// kafkajs's own log entries, routed into the project's logger at debug level. Each is the
// detail of a failure that kafkajs retries itself or hands to its caller, which reports it in
// its own terms (a coded error, a line of its own): left to kafkajs's console logger, a
// refused topic creation printed kafkajs's JSON line before TOPIC_CREATE_REFUSED, and such
// lines went past the logger's redaction of secrets.
import type { logCreator } from 'kafkajs';
import type { Logger } from '../observability/logger.ts';

export function kafkajsLogCreator(logger: Logger): logCreator {
  return () =>
    ({ namespace, log }) => {
      // kafkajs's time and name: the project's line carries its own.
      const { message, timestamp: _time, logger: _name, ...fields } = log;
      logger.debug({ kafkajs: { namespace, ...fields } }, message);
    };
}
