/** What the demo shop sells (the inventory's widgets), and how line items and totals are made. */

/** A product of the demo shop; prices in cents. */
export interface ShopProduct {
  readonly id: string;
  readonly title: string;
  readonly price: number;
}

export const SHOP_PRODUCTS: readonly ShopProduct[] = Object.freeze([
  { id: 'widget-a', title: 'Widget A', price: 1200 },
  { id: 'widget-b', title: 'Widget B', price: 850 },
]);

/** The payment handler the shop declares: it takes any `credential.token` (`tok_demo`). */
export const DEMO_PAYMENT_HANDLER = (version: string) => ({
  'com.example.demo_tokenizer': [
    { id: 'demo_tokenizer', version, available_instruments: [{ type: 'card' }] },
  ],
});

/** A product as catalog responses show it. */
export function catalogProduct(product: ShopProduct): Record<string, unknown> {
  const price = { amount: product.price, currency: 'USD' };
  return {
    id: product.id,
    title: product.title,
    description: { plain: `${product.title}, from the demo inventory` },
    price_range: { min: price, max: price },
    variants: [
      { id: `${product.id}-std`, title: 'Standard', description: { plain: 'Standard size' }, price },
    ],
  };
}

/** `line_items` of a request as the shop prices them, or what is wrong with them. */
export function lineItemsOf(input: unknown): Array<Record<string, unknown>> | string {
  if (!Array.isArray(input) || input.length === 0) return 'line_items are required';
  if (input.length > 50) return 'at most 50 line items';
  const out: Array<Record<string, unknown>> = [];
  for (const [index, raw] of input.entries()) {
    const li = (typeof raw === 'object' && raw !== null ? raw : {}) as {
      item?: { id?: unknown };
      quantity?: unknown;
    };
    const product = SHOP_PRODUCTS.find((p) => p.id === li.item?.id);
    if (!product) return `unknown item ${String(li.item?.id).slice(0, 100)}`;
    const quantity = li.quantity ?? 1;
    if (!Number.isInteger(quantity) || (quantity as number) < 1 || (quantity as number) > 1000) {
      return 'quantity must be an integer from 1 to 1000';
    }
    const amount = product.price * (quantity as number);
    out.push({
      id: `li_${index + 1}`,
      item: { id: product.id, title: product.title, price: product.price },
      quantity,
      totals: [
        { type: 'subtotal', amount },
        { type: 'total', amount },
      ],
    });
  }
  return out;
}

/** Subtotal, discount (when any) and total of priced line items. */
export function totalsOf(items: ReadonlyArray<Record<string, unknown>>, discount: number) {
  const subtotal = items.reduce(
    (sum, li) => sum + (li.item as { price: number }).price * (li.quantity as number),
    0,
  );
  const totals: Array<Record<string, unknown>> = [{ type: 'subtotal', amount: subtotal }];
  if (discount > 0) totals.push({ type: 'discount', display_text: 'SAVE10', amount: -discount });
  totals.push({ type: 'total', amount: subtotal - discount });
  return totals;
}
