// Preloaded into a CLI process (NODE_OPTIONS=--import=...): appends the URL of every
// OpenTelemetry module the process resolves to the file named by TEST_MODULE_LOG,
// so that a test can tell which of them a command loaded.
import { appendFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

const log = process.env.TEST_MODULE_LOG;
if (log) {
  registerHooks({
    resolve(specifier, context, nextResolve) {
      const resolved = nextResolve(specifier, context);
      if (resolved.url.includes('/node_modules/@opentelemetry/')) appendFileSync(log, `${resolved.url}\n`);
      return resolved;
    },
  });
}
