import { defineConfig } from 'vitest/config';

// The deploy suite (`npm run test:deploy`, run by .ci/run after the chaos suite): the container
// image built with podman and run (test/deploy/*.deploy.test.ts, kept out of `npm test`), and
// the checks of the deployment files under test/deploy/. Building the image on a cold machine
// (debootstrap, npm ci) takes minutes, hence the timeouts. Its JSON report feeds .ci/run's
// closing count line with vitest.json and chaos.json.
export default defineConfig({
  test: {
    name: 'deploy',
    include: ['test/deploy/**/*.test.ts'],
    testTimeout: 300_000,
    hookTimeout: 900_000,
    reporters: ['default', 'json'],
    outputFile: { json: 'test-results/deploy.json' },
  },
});
