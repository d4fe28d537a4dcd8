/**
 * Who owns each finger template, both ways (template → person and position, person → templates):
 * what `identifyPerson` needs beside the index to fuse by person. Kept beside the index and changed
 * with it (add when a template is added, remove when it is removed).
 */
import type { TemplateOwner } from './identify-person.js';

export class PersonDirectory {
  readonly #owner = new Map<string, TemplateOwner>();
  readonly #templates = new Map<string, Set<string>>();

  get size(): number {
    return this.#owner.size;
  }

  /** Records (or moves) a template's owner. */
  add(templateId: string, owner: TemplateOwner): void {
    this.remove(templateId);
    this.#owner.set(templateId, { person: owner.person, position: owner.position });
    let set = this.#templates.get(owner.person);
    if (!set) {
      set = new Set();
      this.#templates.set(owner.person, set);
    }
    set.add(templateId);
  }

  /** Forgets a template; false when it was not known. */
  remove(templateId: string): boolean {
    const owner = this.#owner.get(templateId);
    if (!owner) return false;
    this.#owner.delete(templateId);
    const set = this.#templates.get(owner.person)!;
    set.delete(templateId);
    if (set.size === 0) this.#templates.delete(owner.person);
    return true;
  }

  ownerOf(templateId: string): TemplateOwner | null {
    return this.#owner.get(templateId) ?? null;
  }

  templatesOf(person: string): Iterable<string> {
    return this.#templates.get(person) ?? [];
  }
}
