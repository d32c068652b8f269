// The facts the support tools answer from (users, billing records and policy documents). Only
// the shapes live here; where the data comes from is the worker's business (a file, the seed data).

export interface UserProfile {
  id: number;
  name: string;
  country: string;
  tier: string;
}
export interface BillingRecord {
  currency: string;
  plan: string;
  price_usd: number;
  days_since_first_payment: number;
}
export interface PolicyDoc {
  id: string;
  title: string;
  snippet: string;
}

export interface SupportData {
  users: Record<string, UserProfile>;
  billing: Record<string, BillingRecord>;
  policies: PolicyDoc[];
}

/** Reads the support data; called on every tool call, as a real service would be asked every time. */
export type DataSource = () => Promise<SupportData>;
