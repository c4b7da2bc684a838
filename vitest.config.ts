import { defineConfig } from 'vitest/config';
import DurationSequencer from './test/support/duration-sequencer.ts';

// Two groups: `unit` needs nothing but Node; `integration` runs against a real Kafka
// broker, a real schema registry and the sandbox, started once by the global setup.
// `npm test` runs both. The JSON report feeds .ci/run's closing count line.
export default defineConfig({
  test: {
    reporters: ['default', 'json'],
    outputFile: { json: 'test-results/vitest.json' },
    // Longest files first, from test/support/file-durations.json: a clean clone has no
    // durations of its own, and the two workers should end together.
    sequence: { sequencer: DurationSequencer },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          // The chaos suite and test/deploy (container image, deployment files: their script
          // fetches the tools they need) have their own configs (vitest.chaos.config.ts,
          // `npm run test:chaos`; vitest.deploy.config.ts, `npm run test:deploy`).
          exclude: ['test/**/*.integration.test.ts', 'test/chaos/**', 'test/deploy/**'],
          globalSetup: ['test/support/temp-root.ts'],
          // Both cores: vitest's default (one fewer than the cores) ran them one file at a
          // time, 190 s of `npm test` before the first integration file.
          maxWorkers: 2,
          // Unit tests first, then the integration group with its own worker count.
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.integration.test.ts'],
          // The temporary root first: its teardown, last, runs once the broker is stopped.
          globalSetup: ['test/support/temp-root.ts', 'test/support/global-setup.ts'],
          setupFiles: ['test/support/unhandled-rejections.ts'],
          testTimeout: 120_000,
          hookTimeout: 180_000,
          // Two cores: integration files share one broker; running them two at a time
          // keeps the JVMs responsive.
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
