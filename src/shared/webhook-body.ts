import type { AliasKeys, Json, JsonObject, NormalizedCall, PayloadFormat } from './types';

// The JSON body POSTed to receivers (SPEC §4). Receivers see the key order, and some compare bodies
// textually, so it is fixed:
//
//   version, type, userId, <type-specific keys>, timestamp, context, <full-format extras>
//
//   identify  traits
//   track     event, properties
//   page      name?, category?, properties
//   screen    name?, properties
//   group     groupId, traits
//   alias     previousId, "Previous ID", "User ID" (aliasKeys: both, the default); "Previous ID",
//             "User ID" (documented, as the service's docs show); previousId (camel, as Segment's own
//             end-to-end fixtures expect). The common userId stays in every form.
//   full-format extras, each only when the call has it:
//             anonymousId, messageId, integrations, originalTimestamp, sentAt, receivedAt
//
// delete is its own shape, with no version and no context: type, userId, timestamp (+ the extras in
// the full format, so receivers can de-duplicate deletion notices by messageId too).
//
// Decisions: userId is always present (null for anonymous calls) because it is a common field;
// page and screen `name`/`category` appear only when given, rather than as null, so receivers that
// type them as strings keep working; missing context/properties/traits are sent as {}.

const FULL_EXTRAS = ['anonymousId', 'messageId', 'integrations', 'originalTimestamp', 'sentAt', 'receivedAt'] as const;

function put(body: JsonObject, key: string, value: Json | undefined): void {
  if (value !== undefined) body[key] = value;
}

function typeSpecific(call: NormalizedCall, body: JsonObject, aliasKeys: AliasKeys): void {
  switch (call.type) {
    case 'identify':
      body.traits = call.traits ?? {};
      break;
    case 'track':
      body.event = call.event ?? null;
      body.properties = call.properties ?? {};
      break;
    case 'page':
      put(body, 'name', call.name);
      put(body, 'category', call.category);
      body.properties = call.properties ?? {};
      break;
    case 'screen':
      put(body, 'name', call.name);
      body.properties = call.properties ?? {};
      break;
    case 'group':
      body.groupId = call.groupId ?? null;
      body.traits = call.traits ?? {};
      break;
    case 'alias':
      if (aliasKeys !== 'documented') body.previousId = call.previousId ?? null;
      if (aliasKeys !== 'camel') {
        body['Previous ID'] = call.previousId ?? null;
        body['User ID'] = call.userId ?? null;
      }
      break;
    case 'delete':
      break;
  }
}

export function buildWebhookBody(call: NormalizedCall, format: PayloadFormat, aliasKeys: AliasKeys = 'both'): JsonObject {
  const body: JsonObject = {};
  if (call.type === 'delete') {
    body.type = 'delete';
    body.userId = call.userId ?? null;
    body.timestamp = call.timestamp;
  } else {
    body.version = 1;
    body.type = call.type;
    body.userId = call.userId ?? null;
    typeSpecific(call, body, aliasKeys);
    body.timestamp = call.timestamp;
    body.context = call.context ?? {};
  }
  if (format === 'full') {
    for (const key of FULL_EXTRAS) {
      const value = call[key];
      if (value !== undefined && value !== null) body[key] = value;
    }
  }
  return body;
}
