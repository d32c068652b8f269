// The support domain's Node side: its data (a file named by AGENT_DATA_FILE, or the built-in data)
// and its refunds ledger (PostgreSQL or SQLite), unless the worker is given them.
import type { DomainBackend } from '../../../common/domain';
import { readEnv } from '../../../runtime/env-vars';
import { supportDomain } from '../index';
import type { SupportServices } from '../index';
import { dataSourceFromEnv } from './data-source';
import type { DataSource } from './data-source';
import { lazyRefundService } from './refunds/open';
import type { RefundStore } from './refunds/rules';

export interface SupportGiven {
  /** The support data; default: AGENT_DATA_FILE, else the built-in data. */
  data?: DataSource;
  /** The refunds service; default: AGENT_REFUNDS_DATABASE_URL's PostgreSQL, else the SQLite file AGENT_REFUNDS_DB, opened on first use. */
  refunds?: () => RefundStore;
}

/** Drill: the refunds service does not answer lookups (AGENT_REFUND_LOOKUP_FAIL=1). */
export function refundLookupFailsFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  return readEnv('AGENT_REFUND_LOOKUP_FAIL', env);
}

export const supportBackend: DomainBackend<SupportServices, SupportGiven> = {
  domain: supportDomain,
  services: (given) => ({ data: given.data ?? dataSourceFromEnv(), refunds: given.refunds ?? lazyRefundService() }),
  lookupFails: () => refundLookupFailsFromEnv(),
};
