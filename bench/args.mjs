// The command line of a bench script, checked before anything runs. A bench that ran with a
// mistyped option would print a table of something else (or of nothing) and exit 0, so:
// `--help` (or `-h`) prints the usage and exits 0; an unknown option, a missing value, a number
// that is not one, or a list item outside its choices prints what is wrong and the usage on
// stderr and exits 2.
//
//   const { values, positionals } = benchArgs({
//     usage: 'node bench/x.mjs [--rounds 3] [events]',
//     options: {
//       rounds: { type: 'integer', default: 3, min: 1 },
//       scenarios: { type: 'list', default: 'drain,paced', choices: ['drain', 'paced'] },
//       quick: { type: 'boolean' },
//     },
//     positionals: [{ name: 'events', type: 'integer', default: 5000, min: 1 }],
//   });
//
// Types: 'boolean'; 'string' (with `choices`, one of them); 'integer' (with `min`, default 0);
// 'list' (comma-separated, each item one of `choices`, never empty). `required: true` refuses
// a command line without the option. A `default` may be a
// function of the values parsed so far (given as written, before defaults), for defaults that
// depend on another flag such as --quick.

import { parseArgs } from 'node:util';

/** A command-line mistake: its message is what the user reads. */
export class BenchUsageError extends Error {}

/** Parses `argv` (default: this process's arguments) as `spec` says; exits on --help or a mistake. */
export function benchArgs(spec, argv = process.argv.slice(2)) {
  try {
    const parsed = parseBenchArgs(spec, argv);
    if (parsed === 'help') {
      process.stdout.write(`${spec.usage.trimEnd()}\n`);
      process.exit(0);
    }
    return parsed;
  } catch (error) {
    if (!(error instanceof BenchUsageError)) throw error;
    process.stderr.write(`error: ${error.message}\n\n${spec.usage.trimEnd()}\n`);
    process.exit(2);
  }
}

/** An integer environment variable of a bench (`fallback` when unset), checked like an option. */
export function benchEnvInteger(name, fallback, min = 1) {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  try {
    return checked(name, { type: 'integer', min }, text);
  } catch (error) {
    process.stderr.write(`error: ${error.message}\n`);
    process.exit(2);
  }
}

/** What `benchArgs` does, without exiting: returns 'help' or the values, throws `BenchUsageError`. */
export function parseBenchArgs(spec, argv) {
  const declared = spec.options ?? {};
  const options = { help: { type: 'boolean', short: 'h' } };
  for (const [name, option] of Object.entries(declared)) {
    options[name] = { type: option.type === 'boolean' ? 'boolean' : 'string' };
  }
  let raw;
  try {
    raw = parseArgs({
      args: argv,
      options,
      allowPositionals: (spec.positionals ?? []).length > 0,
      strict: true,
    });
  } catch (error) {
    throw new BenchUsageError(error.message.replace(/\. To specify a positional argument.*$/s, ''));
  }
  if (raw.values.help) return 'help';
  const given = { ...raw.values };
  delete given.help;
  const values = {};
  for (const [name, option] of Object.entries(declared)) {
    const text =
      given[name] ?? (typeof option.default === 'function' ? option.default(given) : option.default);
    if (text === undefined && option.required) throw new BenchUsageError(`--${name} is required`);
    values[name] = text === undefined ? undefined : checked(`--${name}`, option, text);
  }
  const slots = spec.positionals ?? [];
  if (raw.positionals.length > slots.length) {
    throw new BenchUsageError(`unexpected argument "${raw.positionals[slots.length]}"`);
  }
  const positionals = {};
  slots.forEach((slot, i) => {
    const text = raw.positionals[i] ?? slot.default;
    positionals[slot.name] = text === undefined ? undefined : checked(slot.name, slot, text);
  });
  return { values, positionals };
}

function checked(name, option, value) {
  if (option.type === 'boolean') return value === true;
  const text = String(value);
  if (option.type === 'integer') {
    const min = option.min ?? 0;
    const n = Number(text);
    if (!(text.trim() !== '' && Number.isSafeInteger(n) && n >= min)) {
      throw new BenchUsageError(`${name} must be an integer ≥ ${min}, not "${text}"`);
    }
    return n;
  }
  if (option.type === 'list') {
    const items = text.split(',').map((item) => item.trim());
    if (items.some((item) => item === '')) throw new BenchUsageError(`${name} has an empty item: "${text}"`);
    for (const item of items) oneOf(name, option.choices, item);
    return items;
  }
  if (text === '') throw new BenchUsageError(`${name} needs a value`);
  oneOf(name, option.choices, text);
  return text;
}

function oneOf(name, choices, value) {
  if (choices && !choices.includes(value)) {
    throw new BenchUsageError(`${name}: "${value}" is not one of ${choices.join(', ')}`);
  }
}
