import { type ParseArgsConfig, parseArgs } from 'node:util';
import { nearest } from '../options/check.js';
import { UsageError } from './connect.js';

/** The flags a command takes, as `node:util` declares them. */
export type Flags = NonNullable<ParseArgsConfig['options']>;

/**
 * Parses a command's flags; what comes after `--` is an argument vector of its own. Node's parse
 * errors become {@link UsageError}s in the CLI's words, with the nearest flag for a misspelled one.
 */
export function parseFlags(name: string, flags: Flags, argv: string[]) {
  const split = argv.indexOf('--');
  const args = split < 0 ? argv : argv.slice(0, split);
  const vector = split < 0 ? undefined : argv.slice(split + 1);
  const options = { ...flags, help: { type: 'boolean', short: 'h' } } as Flags;
  try {
    const { values, positionals } = parseArgs({ args, allowPositionals: true, options, strict: true });
    return { values: values as Record<string, unknown>, positionals, vector };
  } catch (error) {
    const code = (error as { code?: string }).code;
    const flag = /'(-{1,2}[^']+)'/.exec((error as Error).message)?.[1];
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && flag) {
      const near = nearest(flag.replace(/^-+/, '').split('=')[0] ?? '', Object.keys(options));
      throw new UsageError(`${name}: unknown flag ${flag}${near ? ` (did you mean --${near}?)` : ''}`);
    }
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && flag)
      throw new UsageError(`${name}: ${flag} needs a value`);
    throw new UsageError(`${name}: ${(error as Error).message.split('\n')[0]}`);
  }
}
