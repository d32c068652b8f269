import { z } from 'zod';
import type { Product, RetailDB } from '../db';
import { snapshot } from '../db';
import { getProduct } from '../lookup';
import { defineRetailTool } from '../define-tool';

const args = z.strictObject({
  product_id: z
    .string()
    .describe("The product id, such as '6086499569'. Be careful the product id is different from the item id."),
});

function handler(db: RetailDB, { product_id }: z.infer<typeof args>): Product {
  return snapshot(getProduct(db, product_id));
}

export const get_product_details = defineRetailTool<z.infer<typeof args>, Product>({
  name: 'get_product_details',
  kind: 'read',
  description: 'Get the inventory details of a product.',
  args,
  handler,
});
