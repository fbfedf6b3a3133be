import type { AxMCPListKind, Catalog } from './catalog.js';
import type { Connection } from './connection.js';

/**
 * Announces `catalog_changed` once per real change. Lists are refetched and compared with what
 * was last announced — so a change seen twice (a replayed `list_changed` and a reconnect's look)
 * is announced once, and a look of ours that found nothing new announces nothing.
 */
export class CatalogChanges {
  readonly #connection: Connection;
  readonly #catalog: Catalog;
  /** What each list looked like when its last change was announced. */
  readonly #announced = new Map<AxMCPListKind, string>();

  constructor(connection: Connection, catalog: Catalog) {
    this.#connection = connection;
    this.#catalog = catalog;
  }

  /**
   * Refetches `kinds`. The server's own `list_changed` is always announced (`onlyIfChanged`
   * unset); a look of ours only when it found a change.
   */
  refresh(kinds: readonly AxMCPListKind[], options: { onlyIfChanged?: boolean } = {}): void {
    const catalog = this.#catalog;
    const offered = kinds.filter((kind) => catalog.offers(kind));
    for (const kind of offered) {
      if (!this.#announced.has(kind)) this.#announced.set(kind, JSON.stringify(catalog.items(kind)));
    }
    Promise.all(offered.map((kind) => catalog.refresh(kind))).then(
      () => {
        const changed = offered.filter((kind) => {
          const now = JSON.stringify(catalog.items(kind));
          const differs = now !== this.#announced.get(kind);
          this.#announced.set(kind, now);
          return differs || !options.onlyIfChanged;
        });
        if (changed.length === 0) return;
        this.#connection.events.emit({
          type: 'catalog_changed',
          namespace: this.#connection.namespace,
          kinds: changed,
          revision: catalog.revision,
        });
      },
      (error) => this.#connection.report(error),
    );
  }
}
