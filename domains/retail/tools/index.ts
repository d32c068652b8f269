// The retail domain's tools: the 16 @is_tool methods of τ²-bench's RetailTools, one file each
// (defineRetailTool: the reference's function and the runtime's tool).
import { calculate } from './calculate';
import { cancel_pending_order } from './cancel_pending_order';
import { exchange_delivered_order_items } from './exchange_delivered_order_items';
import { find_user_id_by_email } from './find_user_id_by_email';
import { find_user_id_by_name_zip } from './find_user_id_by_name_zip';
import { get_item_details } from './get_item_details';
import { get_order_details } from './get_order_details';
import { get_product_details } from './get_product_details';
import { get_user_details } from './get_user_details';
import { list_all_product_types } from './list_all_product_types';
import { modify_pending_order_address } from './modify_pending_order_address';
import { modify_pending_order_items } from './modify_pending_order_items';
import { modify_pending_order_payment } from './modify_pending_order_payment';
import { modify_user_address } from './modify_user_address';
import { return_delivered_order_items } from './return_delivered_order_items';
import type { RetailTool } from './tool';
import { transfer_to_human_agents } from './transfer_to_human_agents';

export type { RetailTool, RetailToolKind, RetailToolSpec } from './tool';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each tool has its own argument type
export type AnyRetailTool = RetailTool<any, unknown>;

export const retailTools: readonly AnyRetailTool[] = [
  calculate,
  cancel_pending_order,
  exchange_delivered_order_items,
  find_user_id_by_name_zip,
  find_user_id_by_email,
  get_order_details,
  get_product_details,
  get_item_details,
  get_user_details,
  list_all_product_types,
  modify_pending_order_address,
  modify_pending_order_items,
  modify_pending_order_payment,
  modify_user_address,
  return_delivered_order_items,
  transfer_to_human_agents,
];

export const retailToolsByName: ReadonlyMap<string, AnyRetailTool> = new Map(
  retailTools.map((tool) => [tool.name, tool]),
);
