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
    throw new UsageError(`${name}: ${flagParseProblem(error, Object.keys(options), args)}`);
  }
}

/**
 * A `node:util` parse error in the CLI's words: the nearest flag for a misspelled one, and for a
 * flag whose value starts with "-" (`--lease-ms -5`, which Node takes for another flag) the way
 * to give it (`--lease-ms=-5`) rather than a bare "needs a value".
 */
export function flagParseProblem(error: unknown, names: readonly string[], argv: readonly string[]): string {
  const code = (error as { code?: string }).code;
  const message = (error as Error).message;
  const flag = /'(-{1,2}[^' ]+)/.exec(message)?.[1];
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && flag) {
    const near = nearest(flag.replace(/^-+/, '').split('=')[0] ?? '', names);
    return `unknown flag ${flag}${near ? ` (did you mean --${near}?)` : ''}`;
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && flag) {
    const at = argv.indexOf(flag);
    const next = at < 0 ? undefined : argv[at + 1];
    // A value, not a flag: "-5", "-", "-.5" (a flag is a dash and a letter).
    if (next !== undefined && /^-(?![-a-z])/i.test(next))
      return `${flag} needs a value: "${next}" reads as a flag; for a value starting with "-", write ${flag}=${next}`;
    return `${flag} needs a value`;
  }
  return message.split('\n')[0] ?? message;
}
