export { type ChannelProfile, ChannelProfiles, type TurnProfile } from './channel-profiles.js';
export { firstCovering, type ProfileRule, profileApprovers } from './profile-rule.js';
