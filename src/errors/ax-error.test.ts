import { describe, expect, it } from 'vitest';
import { AxAIError } from '../ai/errors.js';
import { AxEventError } from '../events/errors.js';
import { AxProgramError } from '../program/errors.js';
import { AxFunctionError } from '../program/functions.js';
import { AxMCPError, AxMCPTimeoutError } from '../protocol/errors.js';
import { AxError } from './ax-error.js';

describe('AxError', () => {
  it('is the root of every layer, and subclasses keep their own instanceof', () => {
    const errors = [
      new AxMCPError('closed', 'x'),
      new AxEventError('closed', 'x'),
      new AxProgramError('aborted', 'x'),
      new AxAIError('timeout', 'x'),
      new AxFunctionError('out of stock'),
    ];
    for (const error of errors) {
      expect(error).toBeInstanceOf(AxError);
      expect(error).toBeInstanceOf(Error);
      expect(typeof error.code).toBe('string');
    }
    expect(new AxEventError('closed', 'x')).not.toBeInstanceOf(AxMCPError);
    expect(new AxMCPError('timeout', 'x')).not.toBeInstanceOf(AxMCPTimeoutError);
    expect(new Error('plain')).not.toBeInstanceOf(AxError);
    expect(new AxFunctionError('x')).toMatchObject({ code: 'function_failed', name: 'AxFunctionError' });
  });

  it('recognizes an error of another copy of the package by its brand', () => {
    // A second copy has its own class but the same registered symbol.
    const foreign = new Error('from another copy');
    Object.defineProperty(foreign, Symbol.for('ax-mcp.error'), { value: true });
    expect(foreign).toBeInstanceOf(AxError);
    expect(foreign).not.toBeInstanceOf(AxMCPError);
  });
});
