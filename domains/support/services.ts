// What the support tools use beyond their arguments: the support data and the refunds service
// (the system of record). The worker builds them (activities/index.ts): from a file or the
// built-in data, and the SQLite refunds database.
import type { DataSource } from './data';
import type { RefundLedger } from './refund-ledger';

export interface SupportServices {
  /** The support data (users, billing, policies), read on every call. */
  data: DataSource;
  /** The refunds service, opened on first use. */
  refunds: () => RefundLedger;
}
