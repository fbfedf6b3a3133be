/**
 * DNS-rebinding protection: the addresses a name resolves to are checked against the SSRF
 * policy in the agents' `lookup`, before a socket connects.
 */
import type { LookupFunction } from 'node:net';
import { type AxMCPSSRFPolicy, assertAddressAllowed } from '../../net/ssrf.js';

/**
 * Wraps a lookup so that every address it returns passes {@link assertAddressAllowed}.
 * Every node:http path of ax-mcp/node connects through it.
 */
export function guardLookup(base: LookupFunction, policy: AxMCPSSRFPolicy): LookupFunction {
  return (hostname, options, callback) => {
    base(hostname, options, (error, address, family) => {
      if (error) {
        callback(error, address, family);
        return;
      }
      try {
        if (typeof address === 'string') {
          assertAddressAllowed(address, hostname, policy);
          const resolvedFamily = family ?? (address.includes(':') ? 6 : 4);
          if (options.all) callback(null, [{ address, family: resolvedFamily }]);
          else callback(null, address, resolvedFamily);
          return;
        }
        for (const entry of address) assertAddressAllowed(entry.address, hostname, policy);
        if (options.all) {
          callback(null, address);
          return;
        }
        const first = address[0];
        if (first === undefined) callback(null, address);
        else callback(null, first.address, first.family);
      } catch (refusal) {
        callback(refusal as NodeJS.ErrnoException, options.all ? [] : '');
      }
    });
  };
}
