import type { CallType, JsonObject } from './types';

// Ready-made calls for the composer's template menu and for a source's "send a test call".
// Messages carry no type (it is the SampleCall's), no messageId and no timestamp: the client or the
// collector fills those, so a template can be sent many times without tripping de-duplication.

export interface SampleCall {
  id: string;
  label: string;
  type: CallType;
  message: JsonObject;
}

const USER = 'user_1234';
const ANON = '3f6a2c1e-8b5d-4e1a-9c7b-2d4e6f8a0b1c';

export const SAMPLE_CALLS: readonly SampleCall[] = [
  {
    id: 'order-completed',
    label: 'Track: Order Completed',
    type: 'track',
    // Property names from the public e-commerce event spec, so receivers built against it match.
    message: {
      userId: USER,
      event: 'Order Completed',
      properties: {
        checkout_id: 'fksdjfsdjfisjf9sdfjsd9f',
        order_id: '50314b8e9bcf000000000000',
        affiliation: 'Google Store',
        total: 27.5,
        subtotal: 22.5,
        revenue: 25.0,
        shipping: 3,
        tax: 2,
        discount: 2.5,
        coupon: 'hasbros',
        currency: 'USD',
        products: [
          {
            product_id: '507f1f77bcf86cd799439011',
            sku: '45790-32',
            name: 'Monopoly: 3rd Edition',
            price: 19,
            quantity: 1,
            category: 'Games',
            url: 'https://www.example.com/product/path',
            image_url: 'https://www.example.com/product/path.jpg',
          },
          {
            product_id: '505bd76785ebb509fc183733',
            sku: '46493-32',
            name: 'Uno Card Game',
            price: 3,
            quantity: 2,
            category: 'Games',
          },
        ],
      },
    },
  },
  {
    id: 'signed-up',
    label: 'Track: Signed Up',
    type: 'track',
    message: {
      userId: USER,
      event: 'Signed Up',
      properties: { plan: 'Pro Annual', accountType: 'Facebook' },
    },
  },
  {
    id: 'identify',
    label: 'Identify with traits',
    type: 'identify',
    message: {
      userId: USER,
      anonymousId: ANON,
      traits: {
        name: 'Peter Gibbons',
        email: 'peter@example.com',
        plan: 'premium',
        logins: 5,
        address: { street: '6th St', city: 'San Francisco', state: 'CA', postalCode: '94103', country: 'USA' },
      },
    },
  },
  {
    id: 'page',
    label: 'Page view',
    type: 'page',
    message: {
      anonymousId: ANON,
      name: 'Pricing',
      category: 'Docs',
      properties: {
        path: '/pricing',
        referrer: 'https://www.example.com/',
        title: 'Pricing — Example',
        url: 'https://www.example.com/pricing',
      },
      context: { ip: '203.0.113.7', userAgent: 'Mozilla/5.0 (X11; Linux x86_64)' },
    },
  },
  {
    id: 'screen',
    label: 'Screen view',
    type: 'screen',
    message: {
      userId: USER,
      name: 'Home',
      properties: { variation: 'blue sign-up button' },
      context: {
        device: { model: 'iPhone15,2', type: 'ios' },
        os: { name: 'iOS', version: '17.4' },
        app: { build: '3.2.1.142', name: 'Example', version: '3.2.1' },
      },
    },
  },
  {
    id: 'group',
    label: 'Group',
    type: 'group',
    message: {
      userId: USER,
      groupId: 'group_acme',
      traits: { name: 'Acme Inc', industry: 'Technology', employees: 329, plan: 'enterprise' },
    },
  },
  {
    id: 'alias',
    label: 'Alias',
    type: 'alias',
    message: { previousId: ANON, userId: USER },
  },
];

/** A fresh copy of a sample's message (callers edit it), or undefined for an unknown id. */
export function sampleCall(id: string): SampleCall | undefined {
  const found = SAMPLE_CALLS.find((s) => s.id === id);
  return found && { ...found, message: structuredClone(found.message) };
}
