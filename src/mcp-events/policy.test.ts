import { describe, expect, it } from 'vitest';
import { isTemplateLike, unlistedURIs } from './policy.js';

const catalog = {
  resources: [
    { uri: 'inventory://warehouse/current', name: 'current' },
    { uri: 'inventory://warehouse/berlin', name: 'berlin' },
  ],
  resourceTemplates: [
    { uriTemplate: 'inventory://warehouse/{warehouseId}', name: 'warehouse' },
    { uriTemplate: 'file:///logs/{day}.log', name: 'log' },
  ],
};

describe('unlistedURIs: what a list policy names that the catalog does not account for', () => {
  it('passes listed URIs and URIs that fit a template; names the rest', () => {
    expect(
      unlistedURIs(
        ['inventory://warehouse/berlin', 'inventory://warehouse/paris', 'inventroy://warehouse/x'],
        catalog,
      ),
    ).toEqual(['inventroy://warehouse/x']);
  });

  it('takes template text literally around its expressions', () => {
    expect(unlistedURIs(['file:///logs/monday.log', 'file:///logs/mondayXlog'], catalog)).toEqual([
      'file:///logs/mondayXlog',
    ]);
  });

  it('names a template given as a URI, though it fits its own pattern', () => {
    expect(isTemplateLike('inventory://warehouse/{warehouseId}')).toBe(true);
    expect(unlistedURIs(['inventory://warehouse/{warehouseId}'], catalog)).toEqual([
      'inventory://warehouse/{warehouseId}',
    ]);
  });
});
