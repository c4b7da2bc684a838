// The V8 flags partner-enrich runs with. V8 sizes its heap from the machine's memory (a
// quarter of it, up to 4 GB) and lets garbage pile up to that before collecting: draining a
// backlog on a 24 GB machine, the pipeline's live heap stayed under 50 MB while its RSS
// stood at 525 MB. A small young generation and a slow growing old one keep the RSS near
// what is alive, for a few percent of CPU (docs/BENCHMARKS.md, `memory`). They are soft:
// no hard heap cap that would turn a burst into an out-of-memory crash.
//
// bin/partner-enrich.js carries them on its shebang line (a test keeps the two in step);
// whoever starts `node src/cli/main.ts` directly passes them (or NODE_OPTIONS).
export const RUNTIME_NODE_FLAGS = ['--max-semi-space-size=4', '--heap-growing-percent=10'] as const;
