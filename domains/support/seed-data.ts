// The support domain's built-in facts: two users, their billing, three policy documents.
import type { SupportData } from './data';

export type { BillingRecord, PolicyDoc, SupportData, UserProfile } from './data';

export const SEED_DATA: SupportData = {
  users: {
    '42': { id: 42, name: 'Anna', country: 'US', tier: 'pro' },
    '7': { id: 7, name: 'Max', country: 'US', tier: 'free' },
  },
  billing: {
    '42': { currency: 'USD', plan: 'pro_monthly', price_usd: 49.0, days_since_first_payment: 10 },
    '7': { currency: 'USD', plan: 'free', price_usd: 0.0, days_since_first_payment: 120 },
  },
  policies: [
    {
      id: 'refund-v3',
      title: 'Refund Policy',
      snippet: 'Pro monthly subscriptions are refundable within 14 days from the first payment.',
    },
    { id: 'free-v1', title: 'Free Plan Policy', snippet: 'Free plan has no billable payments and cannot be refunded.' },
    {
      id: 'billing-v2',
      title: 'Billing Rules',
      snippet: 'All refunds are returned to the original payment method in USD.',
    },
  ],
};
