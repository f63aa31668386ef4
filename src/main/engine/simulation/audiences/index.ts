// Audiences and computed traits (SPEC §6): the engine part.
export { Audiences, planAudiencesConfig, type AudienceConfigEntry, type ConfigProblem } from './audience-service';
export { syncAudience, diffMembers, SYNC_PATH } from './audience-sync';
export { audienceKey, evaluate, matchesRule, computeValue, type Profile, type ProfileEvent, type Definition } from './rules';
export { loadProfiles } from './profiles';
