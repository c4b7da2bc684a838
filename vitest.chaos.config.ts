import { defineConfig } from 'vitest/config';

// The chaos suite (`npm run test:chaos`), apart from `npm test`: each scenario starts its own
// broker, sandbox and replicas and kills them, so files run one at a time, with timeouts that
// fit outages of a minute. Its JSON report feeds .ci/run's closing count line with vitest.json.
export default defineConfig({
  test: {
    name: 'chaos',
    include: ['test/chaos/**/*.chaos.test.ts'],
    globalSetup: ['test/chaos/support/global-setup.ts'],
    fileParallelism: false,
    maxWorkers: 1,
    // A scenario's own deadline (finish()) comes first, so a stuck pipeline still gets its table.
    testTimeout: 420_000,
    hookTimeout: 180_000,
    reporters: ['default', 'json'],
    outputFile: { json: 'test-results/chaos.json' },
  },
});
