/**
 * Which deliveries of the memory store may be claimed next: unordered ones at once, ordered
 * ones only at the head of their ordering key's queue (in sequence order, so one runs at a
 * time). Internal.
 */

import type { AxEventDelivery } from './store.js';

/** Per-ordering-key queues and the set of claimable candidates. */
export class OrderingQueues {
  readonly #queues = new Map<string, AxEventDelivery[]>();
  /** Unordered deliveries and the head of every queue, in insertion order. */
  readonly #ready = new Set<string>();

  /** The ids of deliveries nothing orders behind another (their status still decides). */
  ready(): Iterable<string> {
    return this.#ready;
  }

  /** A delivery becomes pending. */
  add(d: AxEventDelivery): void {
    if (d.orderingKey === null) {
      this.#ready.add(d.id);
      return;
    }
    const queue = this.#queues.get(d.orderingKey);
    if (!queue) {
      this.#queues.set(d.orderingKey, [d]);
      this.#ready.add(d.id);
      return;
    }
    const last = queue[queue.length - 1] as AxEventDelivery;
    if (last.seq < d.seq) {
      // The common case: a new delivery goes to the back and the head does not change.
      queue.push(d);
      return;
    }
    // A redriven delivery may go back in front of later ones.
    const head = queue[0] as AxEventDelivery;
    let i = queue.length;
    while (i > 0 && (queue[i - 1] as AxEventDelivery).seq > d.seq) i--;
    queue.splice(i, 0, d);
    if (queue[0] !== head) {
      this.#ready.delete(head.id);
      this.#ready.add(d.id);
    }
  }

  /** A delivery is finished: the next of its key becomes claimable. */
  remove(d: AxEventDelivery): void {
    this.#ready.delete(d.id);
    if (d.orderingKey === null) return;
    const queue = this.#queues.get(d.orderingKey);
    if (!queue) return;
    const i = queue.indexOf(d);
    if (i >= 0) queue.splice(i, 1);
    if (queue.length === 0) this.#queues.delete(d.orderingKey);
    else this.#ready.add((queue[0] as AxEventDelivery).id);
  }
}
