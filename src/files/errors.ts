import { PartnerEnrichError } from '../errors.ts';

export const FILES_ERROR_CODES = [
  /** The NDJSON input cannot be read (missing, a directory, no permission). details: path, systemCode. */
  'FILE_INPUT_UNREADABLE',
  /** The output directory or a file in it cannot be created or written. details: path, systemCode. */
  'FILE_OUTPUT_UNWRITABLE',
  /** The NDJSON input is a file the run replaces or removes in the output directory. details: path, output. */
  'FILE_INPUT_IS_OUTPUT',
  /** A line of the NDJSON input over files.maxRecordBytes: dead-lettered with its start. details: path, line, bytes, maxRecordBytes. */
  'FILE_RECORD_TOO_LARGE',
] as const;

export type FilesErrorCode = (typeof FILES_ERROR_CODES)[number];

export class FilesError extends PartnerEnrichError<FilesErrorCode> {}

/**
 * The operating system's refusal, named by the product's code: `what` and the path, then the
 * system's words (`ENOENT: no such file or directory, open '...'`).
 */
export function fileError(code: FilesErrorCode, what: string, path: string, error: unknown): FilesError {
  const systemCode = (error as NodeJS.ErrnoException).code;
  return new FilesError(code, `${what} ${path} cannot be used: ${(error as Error).message}`, {
    cause: error,
    details: { path, ...(systemCode ? { systemCode } : {}) },
  });
}
