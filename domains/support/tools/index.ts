// The support domain's tools. A new tool is one file in this folder and one line in SUPPORT_TOOLS:
// the registry the workflow and the gateway read, the catalog the model sees and the activities a
// worker registers are all derived from this list.
import type { ToolDefinition } from '../../../common/tools/tool';
import type { SupportServices } from '../services';
import { getUserBilling } from './get_user_billing';
import { getUserProfile } from './get_user_profile';
import { issueRefund } from './issue_refund';
import { searchPolicy } from './search_policy';

export const SUPPORT_TOOLS: readonly ToolDefinition<SupportServices>[] = [
  getUserProfile,
  getUserBilling,
  searchPolicy,
  issueRefund,
];
