import { PartnerEnrichError, type ErrorOptions } from '../errors.ts';

export const CONFIG_ERROR_CODES = [
  /** One or more options have invalid values or unknown names; details.problems lists each path. */
  'CONFIG_INVALID',
  /** The configuration file cannot be read or is not valid JSON or YAML. */
  'CONFIG_FILE_UNREADABLE',
  /** An option was renamed; details.renamed names the new one for each old name used. */
  'CONFIG_OPTION_RENAMED',
] as const;

export type ConfigErrorCode = (typeof CONFIG_ERROR_CODES)[number];

/** Raised once, at start: a process with a bad configuration never begins work, so retrying is pointless. */
export class ConfigError extends PartnerEnrichError<ConfigErrorCode> {
  constructor(code: ConfigErrorCode, message: string, options?: ErrorOptions) {
    super(code, message, { ...options, canRetry: false });
  }
}
