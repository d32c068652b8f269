// The services a domain's handlers use when the domain is served over MCP: the same systems of
// record the worker opens (the support data, the refunds ledger, the retail store), from the
// same environment variables, so an MCP client and an agent run see one world.
import { dataSourceFromEnv } from '../domains/support/backend/data-source';
import { lazyRefundService } from '../domains/support/backend/refunds/open';
import { lazyRetailStore } from '../domains/retail/backend/open';
import type { SupportServices } from '../domains/support/index';
import type { RetailServices } from '../domains/retail/pack';

export function servicesOf(domain: string): unknown {
  switch (domain) {
    case 'support':
      return { data: dataSourceFromEnv(), refunds: lazyRefundService() } satisfies SupportServices;
    case 'retail':
      return { records: lazyRetailStore() } satisfies RetailServices;
    default:
      throw new Error(`no services for domain "${domain}"`);
  }
}
