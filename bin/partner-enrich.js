#!/usr/bin/env -S MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=262144 node --max-semi-space-size=4 --heap-growing-percent=10 --v8-pool-size=2
// Entry point of the `partner-enrich` command. The sources are TypeScript that Node 24
// runs directly (type stripping), so there is no build step. The environment and node
// flags are the runtime's memory settings (src/cli/runtime-flags.ts).
import '../src/cli/main.ts';
