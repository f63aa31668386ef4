import { describe, expect, it } from 'vitest';
import { routesToWebhooks } from '../../src/shared/routing';

describe('routesToWebhooks (SPEC §3)', () => {
  it.each([
    ['no integrations', undefined, true],
    ['null', null, true],
    ['not an object', 'Webhooks', true],
    ['an array', ['Webhooks'], true],
    ['empty object', {}, true],
    ['other destination off', { Mixpanel: false }, true],
    ['All: true', { All: true }, true],
    ['Webhooks: false', { Webhooks: false }, false],
    ['Webhooks: false beats All: true', { All: true, Webhooks: false }, false],
    ['All: false', { All: false }, false],
    ['All: false, other destination on', { All: false, Mixpanel: true }, false],
    ['All: false, Webhooks: true', { All: false, Webhooks: true }, true],
    ['All: false, Webhooks options object', { All: false, Webhooks: { setting: 1 } }, true],
    ['All: false, Webhooks empty options object', { All: false, Webhooks: {} }, true],
    ['All: false, Webhooks truthy string', { All: false, Webhooks: 'yes' }, true],
    ['case sensitive: webhooks: false', { webhooks: false }, true],
    ['case sensitive: All: false, webhooks: true', { All: false, webhooks: true }, false],
    ['the all-switch in any case: all: false (analytics-go v3 DisableAll)', { all: false }, false],
    ['all: false, Mixpanel: true (v3 DisableAll().Enable("Mixpanel"))', { all: false, Mixpanel: true }, false],
    ['ALL: false', { ALL: false }, false],
    ['aLl: false, Webhooks: true', { aLl: false, Webhooks: true }, true],
    ['all: true', { all: true }, true],
    ['allow: false is another destination', { allow: false }, true],
    ['Webhooks: null defers to All', { All: false, Webhooks: null }, false],
    ['Webhooks: 0 defers to All (default on)', { Webhooks: 0 }, true],
    ['only literal false disables All', { All: 0 }, true],
  ])('%s', (_, integrations, expected) => {
    expect(routesToWebhooks(integrations)).toBe(expected);
  });

  it('ignores inherited properties', () => {
    const proto = { Webhooks: false };
    const integrations = Object.assign(Object.create(proto) as object, { All: true });
    expect(routesToWebhooks(integrations)).toBe(true);
  });
});
