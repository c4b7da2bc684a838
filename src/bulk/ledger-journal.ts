// The ledger's decisive writes (a submission's quota consumed, its bulk created) kept on the
// local disk until the state topic has them. The state topic takes some milliseconds to
// acknowledge a write; a process killed after the service answered and before that left its
// records under an intent, and whoever read them next paid for them again (the consume, or
// the bulk's tasks). Written synchronously before the state topic is asked, the journal
// narrows that to the answer's way back: a start on the same directory (a container
// restarted in its pod keeps its volume) writes what the state topic lacks before it reads
// a record.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  entryKey,
  ledgerStage as stage,
  submissionOf,
  type LedgerEntry,
  type LedgerStore,
} from './bulk-ledger.ts';

/** The journal's folder in a state directory. */
export const JOURNAL_DIR = 'ledger-journal';

const SUFFIX = '.json';

interface JournalFile {
  /** The state topic the entries belong to: a journal found elsewhere is only taken for its own. */
  topic: string;
  entries: LedgerEntry[];
}

/** Whether losing the write would make anyone pay again. */
const isDecisive = (entries: LedgerEntry[]): boolean => entries.some((entry) => stage(entry) > 0);

/** One file per submission in `<stateDir>/ledger-journal`, for the state topic `topic`. */
export class LedgerJournal {
  readonly #dir: string;
  readonly #topic: string;
  /** Journaled writes of each submission not yet ended: its file goes once none is left. */
  readonly #writing = new Map<string, number>();

  constructor(stateDir: string, topic: string) {
    this.#dir = join(stateDir, JOURNAL_DIR);
    this.#topic = topic;
    mkdirSync(this.#dir, { recursive: true });
  }

  /**
   * Keeps `entries` (of one submission) until the returned function is told the store has them;
   * a write the store failed stays for the next start, unless a later one of the submission is
   * kept. Written whole or not at all: a kill halfway leaves the file before it. A disk that
   * refuses it leaves the write as it was without the journal (the state topic is what makes
   * it durable; the partner state on the same disk fails the pipeline soon enough).
   */
  write(entries: LedgerEntry[]): (durable: boolean) => void {
    const name = encodeURIComponent(submissionOf(entries[0] as LedgerEntry)) + SUFFIX;
    const file = join(this.#dir, name);
    const kept: JournalFile = { topic: this.#topic, entries };
    try {
      writeFileSync(`${file}.tmp`, JSON.stringify(kept));
      renameSync(`${file}.tmp`, file);
    } catch {
      return () => {};
    }
    this.#writing.set(name, (this.#writing.get(name) ?? 0) + 1);
    return (durable) => {
      const left = (this.#writing.get(name) ?? 1) - 1;
      if (left > 0) this.#writing.set(name, left);
      else this.#writing.delete(name);
      if (durable && left === 0) rmSync(file, { force: true });
    };
  }

  /**
   * What an earlier process on this directory journaled and may not have seen acknowledged,
   * and the function that forgets it once the store has what it needed of it.
   */
  pending(): { entries: LedgerEntry[]; clear(): void } {
    // A `.tmp` left by a kill halfway through a write is forgotten with the rest.
    const names = readdirSync(this.#dir);
    return {
      entries: names
        .filter((name) => name.endsWith(SUFFIX))
        .flatMap((name) => {
          const kept = readJournalFile(join(this.#dir, name));
          return kept?.topic === this.#topic ? kept.entries : [];
        }),
      clear: () => {
        for (const name of names) rmSync(join(this.#dir, name), { force: true });
      },
    };
  }
}

/**
 * Moves the journal of a state directory about to be removed (the private directory of a
 * killed process) into `stateDir`'s, where it was kept for the state topic `topic`. What
 * cannot be read (a `.tmp` left by a kill halfway through a write) goes; what was kept for
 * another state topic stays, for a start of that topic's pipeline.
 */
export function adoptLedgerJournal(deadStateDir: string, stateDir: string, topic: string): void {
  const from = join(deadStateDir, JOURNAL_DIR);
  let names: string[];
  try {
    names = readdirSync(from);
  } catch {
    return;
  }
  const to = join(stateDir, JOURNAL_DIR);
  for (const name of names) {
    const file = join(from, name);
    const kept = name.endsWith(SUFFIX) ? readJournalFile(file) : undefined;
    if (kept?.topic !== topic) {
      if (!kept) rmSync(file, { force: true });
      continue;
    }
    try {
      mkdirSync(to, { recursive: true });
      renameSync(file, join(to, name));
    } catch {
      // Taken by another start reaping the same directory.
    }
  }
}

/** A journal file's content; undefined for one unreadable. */
function readJournalFile(file: string): JournalFile | undefined {
  try {
    const kept = JSON.parse(readFileSync(file, 'utf8')) as JournalFile;
    return typeof kept.topic === 'string' && Array.isArray(kept.entries) ? kept : undefined;
  } catch {
    return undefined;
  }
}

/** What a start wrote from the journal: submissions paid for, bulks created, and their records. */
export interface Republished {
  paid: number;
  bulks: number;
  records: number;
}

function countsOf(entries: LedgerEntry[]): Republished {
  const submissions = (atStage: number) =>
    new Set(entries.filter((entry) => stage(entry) === atStage).map(submissionOf)).size;
  const records = entries.reduce(
    (sum, entry) => sum + entry.tasks.reduce((n, task) => n + task.positions.length, 0),
    0,
  );
  return { paid: submissions(1), bulks: submissions(2), records };
}

/**
 * `store` with its decisive writes journaled first, and what the journal holds beyond the
 * store written to it when it is loaded: before any record is read, so that a record of a
 * submission the killed process had paid for or created finds it so.
 */
export function journaledLedgerStore(
  store: LedgerStore,
  journal: LedgerJournal,
  republished: (counts: Republished) => void = () => {},
): LedgerStore {
  return {
    async load() {
      const loaded = await store.load();
      const pending = journal.pending();
      const byKey = new Map(loaded.map((entry) => [entryKey(entry), entry]));
      // Only what the store has as a less advanced entry of the same key: a key it no longer
      // has was released (its records committed) or withdrawn, and a submission is written by
      // its submitter alone, which is dead. Another member that adopted the intent meanwhile
      // made a newer submission of its own, which keeps its records.
      const ahead = pending.entries.filter((entry) => {
        const now = byKey.get(entryKey(entry));
        return now !== undefined && stage(entry) > stage(now);
      });
      if (ahead.length > 0) {
        await store.save(ahead);
        republished(countsOf(ahead));
      }
      pending.clear();
      for (const entry of ahead) byKey.set(entryKey(entry), entry);
      return [...byKey.values()];
    },
    async save(entries) {
      if (!isDecisive(entries)) return store.save(entries);
      const ended = journal.write(entries);
      try {
        await store.save(entries);
        ended(true);
      } catch (error) {
        ended(false);
        throw error;
      }
    },
    remove: (keys) => store.remove(keys),
    ...(store.follow ? { follow: store.follow.bind(store) } : {}),
    ...(store.caughtUp ? { caughtUp: store.caughtUp.bind(store) } : {}),
  };
}
