/** The people room's door: who is who across platforms (the contract is `contracts/people.ts`). */
export { PeopleDirectory, type PersonListing } from './people-directory.js';
