// The retail domain's Node side: the conversations' shop databases (PostgreSQL or SQLite), unless
// the worker is given a store.
import type { DomainBackend } from '../../../common/domain';
import { retailDomain } from '../pack';
import type { RetailServices } from '../pack';
import type { RetailRecords } from '../services';
import { lazyRetailStore } from './open';

export interface RetailGiven {
  /** The retail store; default: AGENT_RETAIL_DATABASE_URL's PostgreSQL, else the SQLite file AGENT_RETAIL_DB, opened on first use. */
  retail?: () => RetailRecords;
}

export const retailBackend: DomainBackend<RetailServices, RetailGiven> = {
  domain: retailDomain,
  services: (given) => ({ records: given.retail ?? lazyRetailStore() }),
};
