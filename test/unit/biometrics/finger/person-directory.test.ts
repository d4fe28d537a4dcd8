import { describe, expect, it } from 'vitest';
import { PersonDirectory } from '../../../../src/biometrics/finger/person-directory.js';

describe('PersonDirectory', () => {
  it('knows each template’s owner and each person’s templates, and follows moves and removals', () => {
    const d = new PersonDirectory();
    d.add('a', { person: 'P1', position: 'right-index' });
    d.add('b', { person: 'P1', position: 'left-index' });
    d.add('c', { person: 'P2', position: 'right-index' });
    expect(d.size).toBe(3);
    expect(d.ownerOf('b')).toEqual({ person: 'P1', position: 'left-index' });
    expect([...d.templatesOf('P1')].sort()).toEqual(['a', 'b']);
    d.add('b', { person: 'P2', position: 'left-thumb' }); // moved to another person
    expect([...d.templatesOf('P1')]).toEqual(['a']);
    expect([...d.templatesOf('P2')].sort()).toEqual(['b', 'c']);
    expect(d.remove('a')).toBe(true);
    expect(d.remove('a')).toBe(false);
    expect([...d.templatesOf('P1')]).toEqual([]);
    expect(d.ownerOf('a')).toBeNull();
    expect(d.size).toBe(2);
  });
});
