// Arguments several retail tools share, described as the reference describes them.
import { z } from 'zod';

export const orderIdArg = z
  .string()
  .describe("The order id, such as '#W0000000'. Be careful there is a '#' symbol at the beginning of the order id.");

/** The payment method that pays or receives an item price difference. */
export const priceDifferencePaymentArg = z
  .string()
  .describe(
    "The payment method id to pay or receive refund for the item price difference, such as 'gift_card_0000000' or 'credit_card_0000000'. These can be looked up from the user or order details.",
  );
