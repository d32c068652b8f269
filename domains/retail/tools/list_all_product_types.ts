import { z } from 'zod';
import type { RetailDB } from '../db';
import { pyJsonDumps } from '../python/json';
import { defineRetailTool } from '../define-tool';

const args = z.strictObject({});

/** A JSON string (as json.dumps(..., sort_keys=True) writes it) mapping product names to product ids. */
function handler(db: RetailDB): string {
  const productDict = Object.create(null) as Record<string, string>; // a product may be named "__proto__"
  for (const product of Object.values(db.products)) productDict[product.name] = product.product_id;
  return pyJsonDumps(productDict, { sortKeys: true });
}

export const list_all_product_types = defineRetailTool<z.infer<typeof args>, string>({
  name: 'list_all_product_types',
  kind: 'read',
  description:
    'List the name and product id of all product types. Each product type has a variety of different items with unique item ids and options. There are only 50 product types in the store.',
  args,
  handler,
});
