import { describe, expect, it } from 'vitest';
import { subscriptionNotes, watchPolicy } from './watch.js';

const catalog = {
  resources: [
    { uri: 'inventory://warehouse/current', name: 'current' },
    { uri: 'inventory://warehouse/berlin', name: 'berlin' },
  ],
  resourceTemplates: [{ uriTemplate: 'inventory://warehouse/{warehouseId}', name: 'warehouse' }],
};

describe('subscriptionNotes: what a watch asked for that the catalog does not show', () => {
  it('names a URI neither listed nor fitting a template; listed and template URIs pass', () => {
    const notes = subscriptionNotes(
      watchPolicy(
        ['inventory://warehouse/berlin', 'inventory://warehouse/paris', 'inventroy://warehouse/x'],
        undefined,
      ),
      catalog,
    );
    expect(notes).toEqual([
      'inventroy://warehouse/x is not among the 2 resource(s) the server lists and fits none of its templates: updates may never come',
    ]);
  });

  it('says when a glob selects nothing, or the server lists nothing for all', () => {
    expect(subscriptionNotes(watchPolicy(undefined, 'inventory://other/*'), catalog)).toEqual([
      '--select matched none of the 2 resource(s) the server lists',
    ]);
    expect(subscriptionNotes(watchPolicy(undefined, 'inventory://warehouse/*'), catalog)).toEqual([]);
    expect(
      subscriptionNotes(watchPolicy(['all'], undefined), { resources: [], resourceTemplates: [] }),
    ).toEqual(['--subscribe all: the server lists no concrete resource']);
    expect(subscriptionNotes(watchPolicy(undefined, undefined), catalog)).toEqual([]);
  });

  it('names a template given where a concrete URI belongs: templates are never expanded', () => {
    expect(subscriptionNotes(['inventory://warehouse/{warehouseId}'], catalog)).toEqual([
      'inventory://warehouse/{warehouseId} is a URI template: templates are never expanded, so no resource has that URI; give concrete URIs (or --select a glob)',
    ]);
  });

  it('takes template text literally around its expressions', () => {
    const dotted = {
      resources: [],
      resourceTemplates: [{ uriTemplate: 'file:///logs/{day}.log', name: 'log' }],
    };
    expect(subscriptionNotes(['file:///logs/monday.log'], dotted)).toEqual([]);
    expect(subscriptionNotes(['file:///logs/mondayXlog'], dotted)).toHaveLength(1);
  });
});
