// The V8 flags partner-enrich runs with. V8 sizes its heap from the machine's memory (a
// quarter of it, up to 4 GB) and lets garbage pile up to that before collecting: draining a
// backlog on a 24 GB machine, the pipeline's live heap stayed under 50 MB while its RSS
// stood at 525 MB. A small young generation and a slow growing old one keep the RSS near
// what is alive, at the cost of a major GC every 10-12 MB the old generation grows: about
// half of the CPU per record, most of it marking on V8's helper threads (docs/BENCHMARKS.md,
// Garbage collection on V8's helper threads). They are soft: no hard heap cap that would
// turn a burst into an out-of-memory crash. Two helper threads instead of node's four: on
// two cores the four compete with the main thread and each other, and two did the same
// marking with about a tenth less CPU per record, for 3-5 MB more at the peak (one helper: 7-14 MB).
//
// bin/partner-enrich.js carries them on its shebang line (a test keeps the two in step);
// whoever starts `node src/cli/main.ts` directly passes them (or NODE_OPTIONS), and
// RUNTIME_ENV below.
export const RUNTIME_NODE_FLAGS = [
  '--max-semi-space-size=4',
  '--heap-growing-percent=10',
  '--v8-pool-size=2',
] as const;

/**
 * The environment partner-enrich runs with, read by glibc's allocator when the process
 * starts. By default glibc gives each thread that allocates (V8's GC helpers, libuv's
 * pool) an arena of its own, and the freed space of each stays with it: draining 1,000,000
 * records at 4,000 records/s, RSS crept from 254 to 281 MB while the heap stayed near 60 MB.
 * Two arenas: 253 MB. glibc also raises the size from which it maps a block of its own to
 * the largest it has freed (up to 32 MB): after the first Kafka fetch or result page is
 * freed, blocks of that size come from the arenas and their freed space stays there. A fixed
 * 256 KiB: 236-238 against 250-253 MB in alternated drains at the same rate (128 KiB cost a
 * fifth of the throughput in an earlier session). docs/BENCHMARKS.md, `memory`. Also on the
 * shebang line.
 */
export const RUNTIME_ENV = { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '262144' } as const;

/** The shebang line of bin/partner-enrich.js: the environment, then node with its flags. */
export const RUNTIME_SHEBANG = `#!/usr/bin/env -S ${Object.entries(RUNTIME_ENV)
  .map(([name, value]) => `${name}=${value}`)
  .join(' ')} node ${RUNTIME_NODE_FLAGS.join(' ')}`;
