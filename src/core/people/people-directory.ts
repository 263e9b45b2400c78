import { type Person, type Platform, platforms } from '../contracts/events.js';
import { type Identity, identityKey, type People } from '../contracts/people.js';

/**
 * The configuration's `people:` as a directory: each listed person's identities, one per platform at most.
 * An identity nobody listed is a person of its own, so a directory built from an empty list compares
 * identities exactly as before people existed.
 */

/** One entry of `people:`: a name and the person's id on each platform where they have one. */
export type PersonListing = { name: string } & Partial<Record<Platform, string | undefined>>;

interface ListedPerson {
  name: string;
  identities: Person[];
}

export class PeopleDirectory implements People {
  private readonly listed = new Map<string, ListedPerson>();

  constructor(people: readonly PersonListing[]) {
    for (const entry of people) {
      const identities = platforms.flatMap((platform): Person[] => {
        const id = entry[platform];
        return id === undefined ? [] : [{ platform, id }];
      });
      const person = { name: entry.name, identities };
      for (const identity of identities) this.listed.set(identityKey(identity), person);
    }
  }

  keyOf(identity: Identity): string {
    const person = this.personOf(identity);
    return person ? `person:${person.name}` : identityKey(identity);
  }

  same(left: Identity, right: Identity): boolean {
    return this.keyOf(left) === this.keyOf(right);
  }

  nameOf(identity: Identity): string | undefined {
    return this.personOf(identity)?.name;
  }

  identitiesOf(identity: Identity): Person[] {
    const given: Person = { platform: identity.platform, id: identity.id };
    const others = (this.personOf(identity)?.identities ?? []).filter(
      (other) => identityKey(other) !== identityKey(given),
    );
    return [given, ...others];
  }

  on(identity: Identity, platform: Platform): Person | undefined {
    return this.identitiesOf(identity).find((each) => each.platform === platform);
  }

  private personOf(identity: Identity): ListedPerson | undefined {
    return this.listed.get(identityKey(identity));
  }
}
