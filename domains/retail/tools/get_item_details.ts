import { z } from 'zod';
import type { RetailDB, Variant } from '../db';
import { snapshot } from '../db';
import { getItem } from '../lookup';
import { defineRetailTool } from '../define-tool';

const args = z.strictObject({
  item_id: z
    .string()
    .describe("The item id, such as '6086499569'. Be careful the item id is different from the product id."),
});

function handler(db: RetailDB, { item_id }: z.infer<typeof args>): Variant {
  return snapshot(getItem(db, item_id));
}

export const get_item_details = defineRetailTool<z.infer<typeof args>, Variant>({
  name: 'get_item_details',
  kind: 'read',
  description: 'Get the inventory details of an item.',
  args,
  handler,
});
