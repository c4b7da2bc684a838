// Exactly-once transactions of one input partition with plain bytes instead of Avro: the
// transactions do not look into the messages.
import type { Kafka } from 'kafkajs';
import {
  KafkaPartitionTransactions,
  type PartitionTransactionsOptions,
} from '../../src/kafka/partition-transactions.ts';
import type { OutputMessage } from '../../src/pipeline/outputs.ts';

/** Every output goes to `output`, its key as key and value. */
export const plainTransactions = (
  kafka: Kafka,
  groupId: string,
  output: string,
  options: Pick<PartitionTransactionsOptions, 'compression'> = {},
): KafkaPartitionTransactions =>
  new KafkaPartitionTransactions(kafka, {
    groupId,
    transactionTimeoutMs: 30_000,
    encode: (message: OutputMessage) => {
      const value = Buffer.from(String(message.key));
      return { topic: output, message: { key: value, value }, bytes: value.length };
    },
    limit: () => 1_000_000,
    ...options,
  });
