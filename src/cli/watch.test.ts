import { describe, expect, it } from 'vitest';
import { subscriptionNotes, watchPolicy } from './watch.js';

const catalog = {
  resources: [
    { uri: 'inventory://warehouse/current', name: 'current' },
    { uri: 'inventory://warehouse/berlin', name: 'berlin' },
  ],
  resourceTemplates: [{ uriTemplate: 'inventory://warehouse/{warehouseId}', name: 'warehouse' }],
};

describe('subscriptionNotes: a selection that says nothing by itself', () => {
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
});
